"""Two-sided interval statistics for version decisions, in the standard library only.

- :func:`wilson_interval`: Wilson score interval for a proportion.
- :func:`newcombe_interval`: Newcombe's hybrid score interval (his method 10) for the difference
  of two independent proportions, ``a - b`` (candidate minus baseline).
- :func:`log_ratio_interval`: a delta-method interval for the ratio of two versions' cost per
  accepted outcome, built on the log scale and exponentiated.

Degenerate inputs are answered explicitly, never with NaN:

- zero trials: the Wilson interval is the whole domain ``(0, 1)``; a Newcombe interval with an
  empty side is ``(-1, 1)``;
- all successes or none: Wilson stays inside ``[0, 1]`` and touches the bound it must (0 or 1);
- a cost ratio needs at least two runs and one accepted outcome on each side and a positive
  baseline cost, otherwise :func:`log_ratio_interval` returns ``None``; a candidate whose total
  cost is zero has ratio 0 and the interval ``(0, 0)``.
"""

import math
from collections.abc import Sequence
from statistics import NormalDist

Interval = tuple[float, float]


def critical_value(confidence_level: float) -> float:
    """The standard normal quantile ``z`` with ``P(-z < Z < z) = confidence_level``."""
    if not 0 < confidence_level < 1:
        msg = f"confidence_level must lie strictly between 0 and 1, not {confidence_level}"
        raise ValueError(msg)
    return -NormalDist().inv_cdf((1 - confidence_level) / 2)  # exact in the far tail too


def _check_counts(successes: int, trials: int) -> None:
    if trials < 0 or not 0 <= successes <= trials:
        msg = f"need 0 <= successes <= trials, not {successes} of {trials}"
        raise ValueError(msg)


def wilson_interval(successes: int, trials: int, confidence_level: float) -> Interval:
    """The Wilson score interval for ``successes / trials``; ``(0, 1)`` for no trials."""
    _check_counts(successes, trials)
    z = critical_value(confidence_level)
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def newcombe_interval(
    successes_a: int,
    trials_a: int,
    successes_b: int,
    trials_b: int,
    confidence_level: float,
) -> Interval:
    """Newcombe's hybrid score interval for ``p_a - p_b``; ``(-1, 1)`` when a side is empty."""
    low_a, high_a = wilson_interval(successes_a, trials_a, confidence_level)
    low_b, high_b = wilson_interval(successes_b, trials_b, confidence_level)
    if trials_a == 0 or trials_b == 0:
        return (-1.0, 1.0)
    p_a, p_b = successes_a / trials_a, successes_b / trials_b
    difference = p_a - p_b
    below = math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
    above = math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
    return (max(-1.0, difference - below), min(1.0, difference + above))


def _log_mean_ratio_variance(costs: Sequence[float], accepted: Sequence[bool]) -> float:
    """Delta-method variance of ``log(mean(cost) / mean(accepted))`` for one version."""
    n = len(costs)
    mean_cost = sum(costs) / n
    mean_accepted = sum(accepted) / n
    var_cost = sum((c - mean_cost) ** 2 for c in costs) / (n - 1)
    var_accepted = sum((a - mean_accepted) ** 2 for a in accepted) / (n - 1)
    covariance = sum(
        (c - mean_cost) * (a - mean_accepted) for c, a in zip(costs, accepted, strict=True)
    ) / (n - 1)
    return (
        var_cost / mean_cost**2
        + var_accepted / mean_accepted**2
        - 2 * covariance / (mean_cost * mean_accepted)
    ) / n


def cost_per_accepted(costs: Sequence[float], accepted: Sequence[bool]) -> float | None:
    """Total cost over accepted outcomes, or None when nothing was accepted."""
    successes = sum(accepted)
    return None if successes == 0 else sum(costs) / successes


def log_ratio_interval(
    candidate: tuple[Sequence[float], Sequence[bool]],
    baseline: tuple[Sequence[float], Sequence[bool]],
    confidence_level: float,
) -> tuple[float, Interval] | None:
    """The ratio of cost per accepted outcome (candidate over baseline) and its interval.

    Each side is (per-run costs, per-run accepted flags). The log of each side's cost per
    accepted outcome is ``log(mean cost) - log(mean accepted)``; its variance comes from the
    delta method with the sample covariance of cost and acceptance, the two sides are
    independent, and the interval ``exp(log ratio ± z·se)`` is returned with the ratio. None when
    the ratio is undefined (see the module notes).
    """
    z = critical_value(confidence_level)
    (cand_costs, cand_ok), (base_costs, base_ok) = candidate, baseline
    if min(len(cand_costs), len(base_costs)) < 2 or not any(cand_ok) or not any(base_ok):  # noqa: PLR2004
        return None
    if sum(base_costs) <= 0:
        return None
    if sum(cand_costs) == 0:
        return (0.0, (0.0, 0.0))
    cand_value = cost_per_accepted(cand_costs, cand_ok)
    base_value = cost_per_accepted(base_costs, base_ok)
    assert cand_value is not None  # noqa: S101 - checked above
    assert base_value is not None  # noqa: S101 - checked above
    log_ratio = math.log(cand_value) - math.log(base_value)
    variance = _log_mean_ratio_variance(cand_costs, cand_ok) + _log_mean_ratio_variance(
        base_costs, base_ok
    )
    spread = z * math.sqrt(max(variance, 0.0))
    return (math.exp(log_ratio), (math.exp(log_ratio - spread), math.exp(log_ratio + spread)))
