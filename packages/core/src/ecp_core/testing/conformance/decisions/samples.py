"""Samples the decision suites store.

An artifact whose fields are hard to keep exactly, a comparison request, a daily schedule.
"""

import json
from datetime import datetime, timedelta
from typing import Any

from ecp_core.decisions.model import (
    CLAIM_CLASS,
    INPUTS_VERSION,
    METHOD_VERSION,
    SOURCE_BINDING,
    SOURCE_TAGS,
    CalculationInputs,
    CalculationRow,
    CompareRequest,
    ComparisonPolicy,
    ConstraintResult,
    ConstraintStatus,
    DecisionArtifact,
    DecisionSchedule,
    EvidenceCounts,
    OutcomeSemantics,
    RecommendedAction,
    SourceEvidence,
    SourceEvidenceCounts,
    Verdict,
)
from ecp_core.decisions.verdict import STANDING_LIMITATIONS
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.samples import NOW
from ecp_core.wire import unstructure

START, END = NOW - timedelta(days=10), NOW

MICRO = timedelta(microseconds=1)

COST_RATIO = "cost_per_accepted_outcome_ratio"


def exact(value: object) -> str:
    """The JSON text of a model: equal texts mean equal floats (-0.0, 1.0 vs 1) and strings."""
    return json.dumps(unstructure(value), sort_keys=True)


def artifact(
    decision_id: str = "d1",
    *,
    tenant: str = "t1",
    created_at: datetime = NOW,
    workflow_id: str = "wf",
    baseline: str = "v1",
    candidate: str = "v2",
    start: datetime = START,
    end: datetime = END,
    request_digest: str = "sha256:request-1",
    schedule_id: str | None = None,
) -> DecisionArtifact:
    """A retained artifact whose fields are hard to keep exactly.

    Floats at the edges of the double range, negative zero, exponent-notation and long cost
    strings, unicode text.
    """
    return DecisionArtifact(
        decision_id=decision_id,
        revision=3,
        tenant_id=tenant,
        workflow_id=workflow_id,
        baseline_version=baseline,
        candidate_version=candidate,
        start=start,
        end=end,
        verdict=Verdict.ABSTAIN,
        recommended_action=RecommendedAction.COLLECT_MORE_EVIDENCE,
        claim_class=CLAIM_CLASS,
        method_version=METHOD_VERSION,
        abstain_reasons=(f"unresolved:{COST_RATIO}",),
        limitations=(*STANDING_LIMITATIONS, "capture window fenêtre-1: 3 events, 4 expected"),
        constraints=(
            ConstraintResult(
                name="candidate_success_rate",
                method="wilson",
                estimate=0.1 + 0.2,
                interval=(1 / 3, 2 / 3),
                limit=0.5,
                status=ConstraintStatus.PASS,
            ),
            ConstraintResult(
                name="success_rate_change",
                method="newcombe_hybrid_score",
                estimate=-0.0,
                interval=(-1.0, 1.0),
                limit=0.0,
                status=ConstraintStatus.UNRESOLVED,
                additional_runs_required=12_345,
            ),
            ConstraintResult(
                name=COST_RATIO,
                method="log_ratio_delta",
                estimate=1.7976931348623157e308,
                interval=(5e-324, 1e300),
                limit=1.1,
                status=ConstraintStatus.UNRESOLVED,
                additional_runs_required=2**40,
            ),
            ConstraintResult(
                name="empty",
                method="log_ratio_delta",
                estimate=None,
                interval=None,
                limit=None,
                status=ConstraintStatus.UNRESOLVED,
            ),
        ),
        additional_runs_required=2**40,
        source_evidence=SourceEvidence(
            binding=SOURCE_BINDING, tags=SOURCE_TAGS, fingerprint="sha256:" + "f" * 64
        ),
        source_delivery=SourceEvidenceCounts(
            baseline=EvidenceCounts(
                runs=40,
                execution_events=41,
                unattributed_events=0,
                outcome_assertions=40,
                provisional_outcomes=1,
                charge_revisions=2,
                source_windows=2,
                missing_runs=0,
            ),
            candidate=EvidenceCounts(
                runs=0,
                execution_events=0,
                unattributed_events=0,
                outcome_assertions=0,
                provisional_outcomes=0,
                charge_revisions=0,
                source_windows=0,
                missing_runs=3,
            ),
        ),
        outcome_semantics=OutcomeSemantics(baseline="sha256:" + "a" * 64, candidate=None),
        calculation_inputs=CalculationInputs(
            version=INPUTS_VERSION,
            baseline=(
                CalculationRow(
                    cost_usd="1E-8",
                    cost_measurement="measured",
                    accepted=True,
                    outcome_measurement="measured",
                    runs=1,
                ),
                CalculationRow(
                    cost_usd="1.5E+3",
                    cost_measurement="estimated",
                    accepted=False,
                    outcome_measurement="inferred",
                    runs=2,
                ),
                CalculationRow(
                    cost_usd="0.000",
                    cost_measurement="measured",
                    accepted=None,
                    outcome_measurement=None,
                    runs=3,
                ),
                CalculationRow(
                    cost_usd="123456789012345.123456789012345678",
                    cost_measurement="measured",
                    accepted=True,
                    outcome_measurement="measured",
                    runs=34,
                ),
            ),
            candidate=(
                CalculationRow(
                    cost_usd=None,
                    cost_measurement="unmeasured",
                    accepted=None,
                    outcome_measurement=None,
                    runs=3,
                ),
            ),
        ),
        policy=ComparisonPolicy(
            min_success_rate=0.0,
            confidence_level=1 - 2**-53,
            max_cost_growth=1e-9,
            max_success_rate_drop=0.25,
            min_runs=2,
            min_outcome_coverage=1.0,
            allow_estimated_cost=True,
        ),
        request_digest=request_digest,
        as_of=created_at,
        created_at=created_at,
        requested_by="analyst é",
        schedule_id=schedule_id,
    )


def compare_request(**fields: Any) -> CompareRequest:
    """A comparison of wf v2 against v1 over [START, END); ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": START,
        "end": END,
    } | fields
    return CompareRequest(**values)


def schedule(
    schedule_id: str = "s1",
    *,
    tenant: str = "t1",
    created_at: datetime = NOW,
    next_run_at: datetime = NOW,
    name: str | None = "nightly",
) -> DecisionSchedule:
    """A daily comparison schedule of wf v2 against v1."""
    return DecisionSchedule(
        schedule_id=schedule_id,
        tenant_id=tenant,
        workflow_id="wf",
        baseline_version="v1",
        candidate_version="v2",
        interval_seconds=86_400,
        window_seconds=30 * 86_400,
        policy=ComparisonPolicy(min_success_rate=0.5, confidence_level=0.9, max_cost_growth=0.1),
        name=name,
        created_at=created_at,
        created_by="analyst",
        next_run_at=next_run_at,
    )


def stored(uow: UnitOfWorkFactory, tenant: str = "t1") -> dict[str, DecisionSchedule]:
    """The tenant's schedules by id."""
    with uow() as tx:
        return {s.schedule_id: s for s in tx.decisions.schedules(tenant)}
