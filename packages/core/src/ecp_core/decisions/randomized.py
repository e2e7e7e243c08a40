"""Randomized comparisons: a version comparison restricted to a rollout's arms (ADR 0095).

Both versions of the request must be arms of the rollout. Each side keeps only the evidence of
units the rollout assigned to that side's arm and to no other (a unit moved between arms by a
weight change saw both versions, so it is left out and counted). The unit of an execution event
is its ``run_id`` for a rollout of runs and its ``subject_id`` for a rollout of subjects. Since
the arm was drawn at random, a difference between the sides is the versions' doing; the
rollout's own verification must not have flagged the assignment, or the comparison abstains.
"""

import attrs

from ecp_core.decisions.model import CompareRequest, RolloutRecommendation, Verdict
from ecp_core.decisions.selection import Selection
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.ports.rollouts import WithRollouts
from ecp_core.rollouts.model import Rollout, RolloutUnit
from ecp_core.rollouts.verification import verify

NOT_HOMOGENEOUS = "assignment_not_homogeneous"
"""The abstain reason when the rollout's verification flags its assignment."""

RANDOMIZED_LIMITATIONS = (
    (
        "randomized comparison: each side holds only the units the rollout assigned to its arm, "
        "so the arms saw alike traffic; it speaks for the window's traffic, not for other times"
    ),
    "success means the outcome definition's predicate on the latest non-future assertion",
    "cost is the recorded charge cost after revisions; provider bills are not consulted",
)
"""The limitations every randomized comparison states (in place of the observed ones)."""


@attrs.frozen(kw_only=True)
class RolloutScope:
    """The rollout a comparison is restricted to, each side's arm, and its verification."""

    rollout: Rollout
    baseline_arm: int
    candidate_arm: int
    homogeneous: bool | None
    """The rollout's verification of its current weight period (None: it abstained)."""


def _arm_errors(request: CompareRequest, rollout: Rollout) -> list[FieldError]:
    arms = {arm.graph_version_ref: arm.index for arm in rollout.arms}
    errors = [
        FieldError(loc=(field,), msg=f"must be one of the rollout's arms: {', '.join(arms)}")
        for field, version in (
            ("baseline_version", request.baseline_version),
            ("candidate_version", request.candidate_version),
        )
        if version not in arms
    ]
    graph_ids = {ref.rsplit("@", 1)[0] for ref in arms}
    if request.workflow_id not in graph_ids:
        errors.append(
            FieldError(loc=("workflow_id",), msg=f"must be the rollout's graph: {min(graph_ids)}")
        )
    if not errors and request.baseline_version == request.candidate_version:
        errors.append(FieldError(loc=("candidate_version",), msg="must be another arm"))
    return errors


def checked_rollout(uow: WithRollouts, tenant_id: str, request: CompareRequest) -> Rollout | None:
    """The request's rollout (None without one); 422 when the versions are not its arms."""
    if request.rollout_id is None:
        return None
    rollout = uow.rollouts.get(tenant_id, request.rollout_id)
    if rollout is None:
        raise ValidationFailed(
            "unknown rollout",
            errors=[FieldError(loc=("rollout_id",), msg=f"no rollout {request.rollout_id}")],
        )
    errors = _arm_errors(request, rollout)
    if errors:
        raise ValidationFailed("the versions are not the rollout's arms", errors=errors)
    return rollout


def rollout_scope(
    uow: WithRollouts, tenant_id: str, request: CompareRequest
) -> RolloutScope | None:
    """The request's rollout scope and its verification (None without); 422 as checked."""
    rollout = checked_rollout(uow, tenant_id, request)
    if rollout is None:
        return None
    arms = {arm.graph_version_ref: arm.index for arm in rollout.arms}
    found = uow.rollouts.assignments(tenant_id, rollout.rollout_id, rollout.period)
    return RolloutScope(
        rollout=rollout,
        baseline_arm=arms[request.baseline_version],
        candidate_arm=arms[request.candidate_version],
        homogeneous=verify(rollout, found).homogeneous,
    )


def unit_of(event: ExecutionEvent, unit: RolloutUnit) -> str | None:
    """The rollout unit an execution event belongs to (None: it names none)."""
    return event.run_id if unit is RolloutUnit.RUN else event.subject_id


def restrict(
    uow: WithRollouts, scope: RolloutScope, selection: Selection, arm: int
) -> tuple[Selection, frozenset[str]]:
    """``selection`` cut to units assigned only to ``arm``, and its units that saw two arms."""
    rollout = scope.rollout
    units = {
        unit
        for entry in selection.executions
        if (unit := unit_of(entry.item, rollout.unit)) is not None
    }
    arms = uow.rollouts.unit_arms(rollout.tenant_id, rollout.rollout_id, units)
    kept = {unit for unit, had in arms.items() if had == {arm}}
    moved = frozenset(unit for unit, had in arms.items() if arm in had and len(had) > 1)
    executions = tuple(
        entry for entry in selection.executions if unit_of(entry.item, rollout.unit) in kept
    )
    runs = {entry.item.run_id for entry in executions}
    charges = {entry.item.charge_id for entry in executions if entry.item.charge_id is not None}
    restricted = Selection(
        executions=executions,
        outcomes=tuple(entry for entry in selection.outcomes if entry.item.run_id in runs),
        revisions=tuple(entry for entry in selection.revisions if entry.item.charge_id in charges),
        definition=selection.definition,
    )
    return restricted, moved


def abstain_reasons(scope: RolloutScope) -> list[str]:
    """Why a randomized comparison cannot conclude whatever its figures say."""
    return [NOT_HOMOGENEOUS] if scope.homogeneous is False else []


def limitations(scope: RolloutScope, moved: int) -> tuple[str, ...]:
    """What a randomized comparison states about its scope, besides the standing ones."""
    rollout = scope.rollout
    stated = [
        f"rollout {rollout.rollout_id} assigned {rollout.unit.value}s by "
        f"homogeneous-assignment-v1; its verification of weight period {rollout.period} "
        + {True: "passed", False: "flagged the assignment", None: "abstained (too few units)"}[
            scope.homogeneous
        ]
    ]
    if moved:
        stated.append(f"{moved} units moved between arms by a weight change were left out")
    if rollout.unit is RolloutUnit.SUBJECT:
        stated.append("evidence counts only when its subject_id is the unit the rollout assigned")
    return tuple(stated)


def recommendation(verdict: Verdict) -> RolloutRecommendation:
    """Promote the candidate on a pass, roll back on a fail, continue on an abstention."""
    return {
        Verdict.PASS: RolloutRecommendation.PROMOTE,
        Verdict.FAIL: RolloutRecommendation.ROLL_BACK,
        Verdict.ABSTAIN: RolloutRecommendation.CONTINUE,
    }[verdict]


__all__ = [
    "NOT_HOMOGENEOUS",
    "RANDOMIZED_LIMITATIONS",
    "RolloutScope",
    "abstain_reasons",
    "checked_rollout",
    "limitations",
    "recommendation",
    "restrict",
    "rollout_scope",
    "unit_of",
]
