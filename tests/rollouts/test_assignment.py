"""Assignment of units to arms: deterministic, proportional, consistent on weight changes."""

import itertools
import math
import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.rollouts.assignment import BUCKETS, arm_of, bucket, first_buckets, rebalanced
from ecp_core.rollouts.model import Arm

pytestmark = pytest.mark.unit

keys = st.binary(min_size=32, max_size=32).map(bytes.hex)


@st.composite
def weight_vectors(draw: st.DrawFn, arms: int | None = None) -> list[int]:
    """Whole percents summing to 100 over 1 to 6 arms (some may be 0)."""
    count = arms if arms is not None else draw(st.integers(1, 6))
    cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=count - 1, max_size=count - 1)))
    bounds = [0, *cuts, 100]
    return [b - a for a, b in itertools.pairwise(bounds)]


def arms_of(weights: list[int], owned: list[tuple[int, ...]]) -> list[Arm]:
    return [
        Arm(index=i, graph_version_ref=f"g@{i + 1}", weight=w, buckets=b)
        for i, (w, b) in enumerate(zip(weights, owned, strict=True))
    ]


@pytest.mark.spec("C17 rollout-assign")
@given(key=keys, units=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=20))
def test_the_same_unit_always_gets_the_same_bucket_and_arm(key: str, units: list[str]) -> None:
    arms = arms_of([90, 10], first_buckets([90, 10]))
    for unit in units:
        assert bucket(key, unit) == bucket(key, unit)
        assert 0 <= bucket(key, unit) < BUCKETS
        assert arm_of(arms, key, unit) == arm_of(arms, key, unit)


@pytest.mark.spec("C17 rollout-assign")
@given(weights=weight_vectors())
def test_every_bucket_has_exactly_one_arm_and_each_arm_its_weight(weights: list[int]) -> None:
    owned = first_buckets(weights)
    assert [len(b) for b in owned] == weights
    assert sorted(b for own in owned for b in own) == list(range(BUCKETS))


@pytest.mark.spec("C17 rollout-assign")
@settings(max_examples=5, deadline=None)
@given(weights=weight_vectors(arms=3))
def test_shares_over_100000_units_stay_within_a_binomial_bound(weights: list[int]) -> None:
    """Each arm's count is within 5 standard deviations of its weight (a miss is ~6e-7)."""
    key = secrets.token_hex(32)
    arms = arms_of(weights, first_buckets(weights))
    n = 100_000
    counts = [0] * len(arms)
    for unit in range(n):
        counts[arm_of(arms, key, f"unit-{unit}").index] += 1
    for weight, count in zip(weights, counts, strict=True):
        p = weight / 100
        assert abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p))


@pytest.mark.spec("C17 rollout-consistent")
@given(before=weight_vectors(arms=4), after=weight_vectors(arms=4), key=keys)
def test_a_weight_change_moves_units_only_from_shrinking_to_growing_arms(
    before: list[int], after: list[int], key: str
) -> None:
    old = arms_of(before, first_buckets(before))
    new = arms_of(after, rebalanced(old, after))
    assert [len(a.buckets) for a in new] == after
    assert sorted(b for a in new for b in a.buckets) == list(range(BUCKETS))
    moved = 0
    for point in range(BUCKETS):
        was = next(a.index for a in old if point in a.buckets)
        now = next(a.index for a in new if point in a.buckets)
        if was != now:
            moved += 1
            assert after[was] < before[was]  # it left an arm that shrank
            assert after[now] > before[now]  # for one that grew
    assert moved == sum(max(0, b - a) for b, a in zip(before, after, strict=True))
    for unit in ("u-1", "u-2", "u-3"):
        was, now = arm_of(old, key, unit).index, arm_of(new, key, unit).index
        assert was == now or (after[was] < before[was] and after[now] > before[now])


@pytest.mark.spec("C17 rollout-consistent")
def test_raising_an_arm_from_10_to_20_percent_keeps_every_unit_it_had() -> None:
    key = secrets.token_hex(32)
    old = arms_of([90, 10], first_buckets([90, 10]))
    new = arms_of([80, 20], rebalanced(old, [80, 20]))
    units = [f"unit-{i}" for i in range(5_000)]
    had = {u for u in units if arm_of(old, key, u).index == 1}
    has = {u for u in units if arm_of(new, key, u).index == 1}
    assert had < has
    assert {u for u in units if arm_of(new, key, u).index == 0} < {
        u for u in units if arm_of(old, key, u).index == 0
    }
