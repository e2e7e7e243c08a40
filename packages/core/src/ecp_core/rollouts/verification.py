"""``homogeneous-assignment-v1``: did a rollout's assignments follow its weights? (ADR 0089).

Within the current weight period: a sample-ratio-mismatch test of each arm's count against its
weight (Pearson's chi-square when every weighted arm expects at least
:data:`MIN_EXPECTED` units; otherwise the exact binomial test when two arms have weight, and an
abstention with more), and a chi-square test that the arms' shares did not drift across
equal-width time buckets. Each flags at p < :data:`ALPHA`; below :data:`MIN_COUNT` assignments
the verification abstains (``homogeneous`` null).
"""

from collections.abc import Sequence
from datetime import datetime

from ecp_core.homogeneity import binomial_two_sided, goodness_of_fit, independence
from ecp_core.rollouts.model import (
    METHOD_VERSION,
    ArmCount,
    Rollout,
    TimeBucket,
    VerifyResponse,
)

ALPHA = 0.001
"""A p-value below this flags the rollout as not homogeneous."""
MIN_COUNT = 100
"""Fewer assignments in the period than this: the verification abstains."""
MIN_EXPECTED = 5
"""Pearson's chi-square needs every weighted arm to expect at least this many units."""
MAX_TIME_BUCKETS = 10
PER_TIME_BUCKET = 50
"""A time bucket per this many assignments, up to :data:`MAX_TIME_BUCKETS`."""

LIMITATIONS = (
    "Counts only the assignments of the current weight period; earlier periods are not tested.",
    "A unit counts once per period, at its first assignment.",
    (
        "Shows that assignment followed the weights, not that the arms' units are alike in what "
        "the tests do not measure."
    ),
    (
        f"Abstains (null) below {MIN_COUNT} assignments, and with more than two weighted arms "
        f"when an arm expects fewer than {MIN_EXPECTED}."
    ),
    "The drift test uses equal-width time buckets and needs at least two of them.",
)


def _sample_ratio(observed: Sequence[int], weights: Sequence[int]) -> tuple[float, str] | None:
    """The SRM p-value and test name, or None (abstain)."""
    if any(o for o, w in zip(observed, weights, strict=True) if w == 0):
        return 0.0, "zero_weight_assigned"
    counts = [o for o, w in zip(observed, weights, strict=True) if w > 0]
    shares = [w / 100 for w in weights if w > 0]
    total = sum(counts)
    if len(counts) == 1:
        return 1.0, "single_arm"
    if min(shares) * total >= MIN_EXPECTED:
        return goodness_of_fit(counts, shares)[1], "chi_square"
    if len(counts) == 2:  # noqa: PLR2004
        return binomial_two_sided(counts[0], total, shares[0]), "exact_binomial"
    return None


def _time_buckets(assignments: Sequence[tuple[int, datetime]], arms: int) -> list[TimeBucket]:
    """Equal-width time buckets over the period's assignments, counted per arm."""
    if not assignments:
        return []
    first = min(t for _, t in assignments)
    last = max(t for _, t in assignments)
    count = max(1, min(MAX_TIME_BUCKETS, len(assignments) // PER_TIME_BUCKET))
    if first == last:
        count = 1
    width = (last - first) / count
    counts = [[0] * arms for _ in range(count)]
    for arm, at in assignments:
        slot = count - 1 if width.total_seconds() == 0 else int((at - first) / width)
        counts[min(slot, count - 1)][arm] += 1
    return [
        TimeBucket(
            start=first + width * i,
            end=last if i == count - 1 else first + width * (i + 1),
            observed=tuple(row),
        )
        for i, row in enumerate(counts)
    ]


def verify(rollout: Rollout, assignments: Sequence[tuple[int, datetime]]) -> VerifyResponse:
    """The verification of ``rollout`` from its period's (arm, assigned_at) assignments."""
    weights = [arm.weight for arm in rollout.arms]
    observed = [0] * len(weights)
    for arm, _ in assignments:
        observed[arm] += 1
    total = len(assignments)
    buckets = _time_buckets(assignments, len(weights))
    ratio = None if total < MIN_COUNT else _sample_ratio(observed, weights)
    weighted = [i for i, w in enumerate(weights) if w > 0]
    drift = None
    if ratio is not None and len(buckets) > 1:
        found = independence([[b.observed[i] for i in weighted] for b in buckets])
        drift = None if found is None else found[2]
    homogeneous = None
    if ratio is not None:
        homogeneous = ratio[0] >= ALPHA and (drift is None or drift >= ALPHA)
    return VerifyResponse(
        method_version=METHOD_VERSION,
        homogeneous=homogeneous,
        sample_ratio_p_value=None if ratio is None else ratio[0],
        sample_ratio_test=None if ratio is None else ratio[1],
        drift_p_value=drift,
        period=rollout.period,
        arms=tuple(
            ArmCount(expected=total * w / 100, observed=o)
            for w, o in zip(weights, observed, strict=True)
        ),
        time_buckets=tuple(buckets),
        limitations=LIMITATIONS,
    )


__all__ = ["ALPHA", "LIMITATIONS", "MIN_COUNT", "verify"]
