"""``interval-policy/1``: abstain rules, interval constraints and the verdict.

Abstain rules come first: when any holds the verdict is abstain whatever the intervals say.
Otherwise each constraint's two-sided interval is set against its limit: it passes when the
whole interval clears the limit, fails when the whole interval lies beyond it, and is unresolved
otherwise. Any failure fails; all passing passes; anything else abstains, naming the unresolved
constraints with an estimate of the additional runs per version that would resolve them.
"""

import math
from collections.abc import Sequence

import attrs

from ecp_core.decisions.model import (
    ComparisonPolicy,
    ConstraintResult,
    ConstraintStatus,
    RecommendedAction,
    Verdict,
)
from ecp_core.decisions.selection import RunEconomics, SideEconomics
from ecp_core.evidence.model import OutcomeMeasurement
from ecp_core.stats import log_ratio_interval, newcombe_interval, wilson_interval
from ecp_core.types import CostMeasurement

STANDING_LIMITATIONS = (
    (
        "observed comparison of two versions' recorded runs, not a randomized experiment: "
        "differences in traffic between the windows are not controlled"
    ),
    "success means the outcome definition's predicate on the latest non-future assertion",
    "cost is the recorded charge cost after revisions; provider bills are not consulted",
)


@attrs.frozen(kw_only=True)
class Outcome:
    """The verdict with everything that led to it."""

    verdict: Verdict
    action: RecommendedAction
    abstain_reasons: tuple[str, ...]
    constraints: tuple[ConstraintResult, ...]
    additional_runs_required: int | None


def _resolved(runs: Sequence[RunEconomics]) -> list[RunEconomics]:
    return [run for run in runs if run.accepted is not None]


def _evidence_reasons(
    policy: ComparisonPolicy, baseline: SideEconomics, candidate: SideEconomics
) -> list[str]:
    """Abstain rules about the runs themselves: counts, coverage, cost and outcome quality."""
    reasons = []
    sides = (baseline.runs, candidate.runs)
    if min(len(runs) for runs in sides) < policy.min_runs:
        reasons.append("too_few_runs")
    if any(
        not runs or len(_resolved(runs)) < policy.min_outcome_coverage * len(runs) for runs in sides
    ):
        reasons.append("low_outcome_coverage")
    every = [run for runs in sides for run in runs]
    measurements = {run.cost_measurement for run in every}
    if CostMeasurement.UNMEASURED in measurements:
        reasons.append("unmeasured_cost")
    if CostMeasurement.ESTIMATED in measurements and not policy.allow_estimated_cost:
        reasons.append("estimated_cost")
    if any(run.outcome_measurement is OutcomeMeasurement.INFERRED for run in every):
        reasons.append("inferred_outcomes")
    if not any(run.accepted for run in baseline.runs):
        reasons.append("no_accepted_baseline_outcomes")
    if baseline.runs and all(run.cost_usd == 0 for run in baseline.runs):
        reasons.append("zero_baseline_cost")
    return reasons


def abstain_reasons(
    policy: ComparisonPolicy,
    baseline: SideEconomics,
    candidate: SideEconomics,
    definitions: tuple[str | None, str | None],
    inventories: tuple[bool, bool],
) -> list[str]:
    """Every abstain rule that holds, as stable codes (empty: the intervals decide)."""
    reasons = ["min_success_rate_missing"] if policy.min_success_rate is None else []
    reasons += _evidence_reasons(policy, baseline, candidate)
    if None in definitions:
        reasons.append("outcome_definition_missing")
    elif definitions[0] != definitions[1]:
        reasons.append("outcome_definitions_differ")
    if inventories[0] != inventories[1]:
        reasons.append("source_inventory_one_sided")
    if baseline.inventory_problems or candidate.inventory_problems:
        reasons.append("source_inventory_mismatch")
    return reasons


def _status(interval: tuple[float, float], limit: float, *, at_least: bool) -> ConstraintStatus:
    low, high = interval
    if at_least:
        return (
            ConstraintStatus.PASS
            if low >= limit
            else ConstraintStatus.FAIL
            if high < limit
            else ConstraintStatus.UNRESOLVED
        )
    return (
        ConstraintStatus.PASS
        if high <= limit
        else ConstraintStatus.FAIL
        if low > limit
        else ConstraintStatus.UNRESOLVED
    )


def additional_runs(
    n: int, estimate: float, interval: tuple[float, float], limit: float
) -> int | None:
    """Runs per version to add so the interval's half-width no longer reaches the limit.

    Widths shrink like ``1/sqrt(n)``: ``n' = n * (h / d)**2`` with ``h`` the half-width on the
    limit's side and ``d`` the estimate's distance to the limit. None when ``d`` is 0.
    """
    distance = abs(estimate - limit)
    if distance == 0 or n == 0:
        return None
    half = estimate - interval[0] if estimate >= limit else interval[1] - estimate
    needed = n * (half / distance) ** 2
    return max(1, math.ceil(needed - n))


def _costs(runs: Sequence[RunEconomics]) -> tuple[list[float], list[bool]] | None:
    """Per-run costs and acceptance; None when any cost is unknown (never counted as zero)."""
    if any(run.cost_usd is None for run in runs):
        return None
    costs = [float(run.cost_usd) for run in runs if run.cost_usd is not None]
    return (costs, [bool(run.accepted) for run in runs])


def constraints(
    policy: ComparisonPolicy, baseline: SideEconomics, candidate: SideEconomics
) -> list[ConstraintResult]:
    """The three constraints of ``interval-policy/1``.

    Candidate success rate (Wilson), success-rate change (Newcombe, candidate minus baseline)
    and cost per accepted outcome (log-ratio delta interval).
    """
    level = policy.confidence_level
    base_ok = _resolved(baseline.runs)
    cand_ok = _resolved(candidate.runs)
    cand_s, cand_n = sum(bool(r.accepted) for r in cand_ok), len(cand_ok)
    base_s, base_n = sum(bool(r.accepted) for r in base_ok), len(base_ok)
    results = []
    floor = policy.min_success_rate
    if floor is not None:
        interval = wilson_interval(cand_s, cand_n, level)
        estimate = cand_s / cand_n if cand_n else None
        status = _status(interval, floor, at_least=True) if cand_n else ConstraintStatus.UNRESOLVED
        results.append(
            ConstraintResult(
                name="candidate_success_rate",
                method="wilson",
                estimate=estimate,
                interval=interval,
                limit=floor,
                status=status,
                additional_runs_required=_more(status, cand_n, estimate, interval, floor),
            )
        )
    change = newcombe_interval(cand_s, cand_n, base_s, base_n, level)
    drop = -policy.max_success_rate_drop or 0.0  # never -0.0
    estimate = cand_s / cand_n - base_s / base_n if cand_n and base_n else None
    status = (
        _status(change, drop, at_least=True)
        if estimate is not None
        else ConstraintStatus.UNRESOLVED
    )
    results.append(
        ConstraintResult(
            name="success_rate_change",
            method="newcombe_hybrid_score",
            estimate=estimate,
            interval=change,
            limit=drop,
            status=status,
            additional_runs_required=_more(status, max(cand_n, base_n), estimate, change, drop),
        )
    )
    cand_costs, base_costs = _costs(candidate.runs), _costs(baseline.runs)
    ratio = (
        None
        if cand_costs is None or base_costs is None
        else log_ratio_interval(cand_costs, base_costs, level)
    )
    ceiling = 1 + policy.max_cost_growth
    if ratio is None:
        results.append(
            ConstraintResult(
                name="cost_per_accepted_outcome_ratio",
                method="log_ratio_delta",
                estimate=None,
                interval=None,
                limit=ceiling,
                status=ConstraintStatus.UNRESOLVED,
            )
        )
    else:
        value, interval = ratio
        status = _status(interval, ceiling, at_least=False)
        n = max(len(candidate.runs), len(baseline.runs))
        results.append(
            ConstraintResult(
                name="cost_per_accepted_outcome_ratio",
                method="log_ratio_delta",
                estimate=value,
                interval=interval,
                limit=ceiling,
                status=status,
                additional_runs_required=_more(status, n, value, interval, ceiling),
            )
        )
    return results


def _more(
    status: ConstraintStatus,
    n: int,
    estimate: float | None,
    interval: tuple[float, float],
    limit: float,
) -> int | None:
    if status is not ConstraintStatus.UNRESOLVED or estimate is None:
        return None
    return additional_runs(n, estimate, interval, limit)


def decide(reasons: Sequence[str], results: Sequence[ConstraintResult]) -> Outcome:
    """The verdict: abstain rules first, then any failure, then all passing."""
    unresolved = [r for r in results if r.status is ConstraintStatus.UNRESOLVED]
    more = [r.additional_runs_required for r in unresolved if r.additional_runs_required]
    if reasons:
        verdict = Verdict.ABSTAIN
    elif any(r.status is ConstraintStatus.FAIL for r in results):
        verdict = Verdict.FAIL
    elif not unresolved:
        verdict = Verdict.PASS
    else:
        verdict = Verdict.ABSTAIN
        reasons = [*reasons, *(f"unresolved:{r.name}" for r in unresolved)]
    action = {
        Verdict.PASS: RecommendedAction.REVIEW_CANDIDATE,
        Verdict.FAIL: RecommendedAction.KEEP_BASELINE,
        Verdict.ABSTAIN: RecommendedAction.COLLECT_MORE_EVIDENCE,
    }[verdict]
    return Outcome(
        verdict=verdict,
        action=action,
        abstain_reasons=tuple(reasons),
        constraints=tuple(results),
        additional_runs_required=max(more) if verdict is Verdict.ABSTAIN and more else None,
    )
