"""The homogeneity tests equal scipy's to 1e-9, and verify's decisions on counts."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from ecp_core.homogeneity import (
    binomial_two_sided,
    chi_square_sf,
    goodness_of_fit,
    independence,
)
from ecp_core.rollouts.assignment import first_buckets
from ecp_core.rollouts.model import Arm, Rollout, RolloutStatus, RolloutUnit
from ecp_core.rollouts.verification import MIN_COUNT, verify

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.spec("C17 rollout-verify")
@given(statistic=st.floats(0, 500), df=st.integers(1, 40))
def test_the_chi_square_tail_equals_scipy(statistic: float, df: int) -> None:
    assert chi_square_sf(statistic, df) == pytest.approx(stats.chi2.sf(statistic, df), abs=1e-9)


@pytest.mark.spec("C17 rollout-verify")
@given(
    counts=st.lists(st.integers(5, 5_000), min_size=2, max_size=6),
    raw=st.lists(st.integers(1, 100), min_size=6, max_size=6),
)
def test_the_sample_ratio_test_equals_scipy(counts: list[int], raw: list[int]) -> None:
    weights = raw[: len(counts)]
    shares = [w / sum(weights) for w in weights]
    total = sum(counts)
    statistic, p = goodness_of_fit(counts, shares)
    expected = stats.chisquare(counts, [total * s for s in shares])
    assert statistic == pytest.approx(expected.statistic, rel=1e-9)
    assert p == pytest.approx(expected.pvalue, abs=1e-9)


@pytest.mark.spec("C17 rollout-verify")
@given(trials=st.integers(1, 400), data=st.data(), percent=st.integers(1, 99))
def test_the_exact_binomial_test_equals_scipy(
    trials: int, data: st.DataObject, percent: int
) -> None:
    successes = data.draw(st.integers(0, trials))
    p = percent / 100
    assert binomial_two_sided(successes, trials, p) == pytest.approx(
        stats.binomtest(successes, trials, p).pvalue, abs=1e-9
    )


@pytest.mark.spec("C17 rollout-verify")
@given(
    table=st.lists(st.lists(st.integers(1, 400), min_size=2, max_size=2), min_size=2, max_size=8)
)
def test_the_drift_test_equals_scipy(table: list[list[int]]) -> None:
    found = independence(table)
    assert found is not None
    statistic, df, p = found
    expected = stats.chi2_contingency(table, correction=False)
    assert statistic == pytest.approx(expected.statistic, rel=1e-9)
    assert df == expected.dof
    assert p == pytest.approx(expected.pvalue, abs=1e-9)


def rollout(weights: list[int]) -> Rollout:
    return Rollout(
        tenant_id="t1",
        rollout_id="r1",
        deployment_ref="d",
        unit=RolloutUnit.RUN,
        arms=tuple(
            Arm(index=i, graph_version_ref=f"g@{i + 1}", weight=w, buckets=b)
            for i, (w, b) in enumerate(zip(weights, first_buckets(weights), strict=True))
        ),
        status=RolloutStatus.ACTIVE,
        key="00" * 32,
        created_at=T0,
        updated_at=T0,
    )


def spread(counts: list[int]) -> list[tuple[int, datetime]]:
    """Assignments one a second, each arm as evenly spread over the time as its count allows."""
    total, taken, order = sum(counts), [0] * len(counts), []
    for k in range(total):
        arm = max(range(len(counts)), key=lambda a: counts[a] * (k + 1) / total - taken[a])
        taken[arm] += 1
        order.append((arm, T0 + timedelta(seconds=k)))
    return order


@pytest.mark.spec("C17 rollout-verify")
def test_verify_abstains_below_the_minimum_and_flags_a_starved_arm() -> None:
    small = verify(rollout([90, 10]), spread([80, MIN_COUNT - 81]))
    assert (small.homogeneous, small.sample_ratio_p_value) == (None, None)
    fair = verify(rollout([90, 10]), spread([1800, 200]))
    assert fair.homogeneous is True
    assert fair.sample_ratio_test == "chi_square"
    assert [(a.expected, a.observed) for a in fair.arms] == [(1800.0, 1800), (200.0, 200)]
    assert sum(sum(b.observed) for b in fair.time_buckets) == 2000
    starved = verify(rollout([90, 10]), spread([1990, 10]))
    assert starved.homogeneous is False
    assert starved.sample_ratio_p_value < 0.001
    small_arm = verify(rollout([99, 1]), spread([300, 0]))
    assert small_arm.sample_ratio_test == "exact_binomial"
    assert small_arm.sample_ratio_p_value == pytest.approx(
        stats.binomtest(300, 300, 0.99).pvalue, abs=1e-9
    )
    zero = verify(rollout([100, 0]), spread([150, 1]))
    assert zero.homogeneous is False


@pytest.mark.spec("C17 rollout-verify")
def test_verify_flags_an_arm_whose_share_drifted_over_time() -> None:
    early = [(0, T0 + timedelta(seconds=i)) for i in range(500)]
    late = [(1, T0 + timedelta(seconds=1000 + i)) for i in range(500)]
    drifted = verify(rollout([50, 50]), early + late)
    assert drifted.sample_ratio_p_value == pytest.approx(1.0)
    assert drifted.drift_p_value is not None
    assert drifted.drift_p_value < 0.001
    assert drifted.homogeneous is False


@pytest.mark.spec("C17 rollout-verify")
@given(
    weights=st.sampled_from([[90, 10], [50, 50], [34, 33, 33], [70, 20, 10], [100, 0]]),
    scale=st.integers(2, 40),
)
def test_counts_exactly_at_the_weights_verify_and_are_all_counted(
    weights: list[int], scale: int
) -> None:
    counts = [w * scale for w in weights]
    report = verify(rollout(weights), spread(counts))
    assert [a.observed for a in report.arms] == counts
    assert [a.expected for a in report.arms] == [float(c) for c in counts]
    assert sum(sum(b.observed) for b in report.time_buckets) == sum(counts)
    if sum(counts) < MIN_COUNT:
        assert report.homogeneous is None
    else:
        assert report.homogeneous is True
        assert report.sample_ratio_p_value == pytest.approx(1.0)
