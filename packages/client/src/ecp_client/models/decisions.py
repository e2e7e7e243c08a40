"""The API's decisions models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any

import attrs

__all__ = [
    "CalculationInputs",
    "CalculationRow",
    "ComparisonPolicy",
    "ConstraintResult",
    "DecisionArtifact",
    "DecisionListResponse",
    "EvidenceCounts",
    "OutcomeSemantics",
    "SourceEvidence",
    "SourceEvidenceCounts",
]


@attrs.frozen(kw_only=True)
class CalculationRow:
    """A ``run-economics/1`` row: identical runs collapsed, ``runs`` counting them."""

    accepted: bool | None
    """Whether the run's outcome was accepted; null when unknown."""
    cost_measurement: str
    """How the cost is known: measured, estimated or not at all."""
    cost_usd: str | None
    """The run's cost in USD, as a decimal string; null when unknown."""
    outcome_measurement: str | None
    """How the outcome is known."""
    runs: int
    """How many identical runs the row stands for."""


@attrs.frozen(kw_only=True)
class CalculationInputs:
    """Per-run economics behind the figures, baseline and candidate separately."""

    baseline: list[CalculationRow]
    """The baseline's rows."""
    candidate: list[CalculationRow]
    """The candidate's rows."""
    version: str
    """The format of the rows (`run-economics/1`)."""


@attrs.frozen(kw_only=True)
class ComparisonPolicy:
    """What a candidate must show."""

    allow_estimated_cost: bool = False
    """Whether estimated costs count as evidence (otherwise only measured ones do)."""
    confidence_level: Decimal = Decimal("0.95")
    """The confidence level of the intervals (0.95: 95 percent)."""
    max_cost_growth: Decimal = Decimal("0.1")
    """How much dearer per accepted outcome the candidate may be (0.10: 10 percent)."""
    max_success_rate_drop: Decimal = Decimal("0.0")
    """The largest fall of the success rate tolerated (0: none)."""
    min_outcome_coverage: Decimal = Decimal("0.9")
    """The smallest share of runs that must have a known outcome."""
    min_runs: int = 30
    """The fewest runs per side a verdict needs."""
    min_success_rate: Decimal | None = None
    """The lowest success rate the candidate may have; null makes the comparison abstain."""


@attrs.frozen(kw_only=True)
class ConstraintResult:
    """One constraint: its estimate, two-sided interval, limit and status."""

    additional_runs_required: int | None = None
    """About how many more runs would resolve it, when unresolved."""
    estimate: Decimal | None
    """The point estimate; null without evidence."""
    interval: list[Any] | None
    """The two-sided interval, lower and upper bound; null without evidence."""
    limit: Decimal | None
    """The limit the interval is held against."""
    method: str
    """How its interval was computed."""
    name: str
    """The constraint."""
    status: str
    """Where the interval lies against the limit."""


@attrs.frozen(kw_only=True)
class OutcomeSemantics:
    """Digests of each version's outcome definition (null: none)."""

    baseline: str | None
    """The digest of the baseline's outcome definition; null: none."""
    candidate: str | None
    """The digest of the candidate's outcome definition; null: none."""


@attrs.frozen(kw_only=True)
class SourceEvidence:
    """The fingerprint of the selected evidence and the binding rules it was taken under."""

    binding: str
    """The rule that binds evidence to a version."""
    fingerprint: str
    """The fingerprint of the selected evidence."""
    tags: list[str]
    """The binding tags the evidence was selected by."""


@attrs.frozen(kw_only=True)
class EvidenceCounts:
    """What one side's selected evidence holds."""

    charge_revisions: int
    """Charge revisions."""
    execution_events: int
    """Execution events of those runs."""
    missing_runs: int
    """Runs the inventory names that have no evidence."""
    outcome_assertions: int
    """Outcome assertions."""
    provisional_outcomes: int
    """Outcome assertions that are not final yet."""
    runs: int
    """Runs selected."""
    source_windows: int
    """Source windows of the inventory."""
    unattributed_events: int
    """Events that name no run."""


@attrs.frozen(kw_only=True)
class SourceEvidenceCounts:
    """Evidence counts of both sides."""

    baseline: EvidenceCounts
    """The baseline's counts."""
    candidate: EvidenceCounts
    """The candidate's counts."""


@attrs.frozen(kw_only=True)
class DecisionArtifact:
    """An immutable comparison result; identical request and evidence return it again."""

    abstain_reasons: list[str]
    """Why the comparison abstained, as codes."""
    additional_runs_required: int | None
    """About how many more runs would allow a verdict, when it abstains."""
    as_of: datetime
    """The time the evidence was read at (RFC 3339, UTC)."""
    baseline_version: str
    """The workflow version compared against (the one in use)."""
    calculation_inputs: CalculationInputs | None = None
    """The per-run economics behind the figures."""
    candidate_version: str
    """The workflow version that may replace the baseline."""
    claim_class: str
    """What kind of claim the verdict makes."""
    constraints: list[ConstraintResult]
    """Each constraint: estimate, interval, limit and status."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    decision_id: str
    """The decision's id."""
    end: datetime
    """The end of the window, excluded (RFC 3339, UTC)."""
    limitations: list[str]
    """What the verdict does not cover."""
    method_version: str
    """The version of the comparison method."""
    outcome_semantics: OutcomeSemantics | None = None
    """The digests of the outcome definitions."""
    policy: ComparisonPolicy
    """The policy the candidate was held to."""
    recommended_action: str
    """What to do next."""
    request_digest: str
    """The digest of the request; the same request and evidence give the same decision."""
    requested_by: str
    """Who asked for it."""
    revision: int
    """The revision of the decision; new evidence for the same request adds one."""
    rollout_id: str | None = None
    """The rollout whose arms the comparison was restricted to; null: an observed comparison."""
    rollout_recommendation: str | None = None
    """With a rollout: promote the candidate, roll back to the baseline or continue."""
    schedule_id: str | None = None
    """The schedule that made the comparison, if one did."""
    source_delivery: SourceEvidenceCounts | None = None
    """What each side's evidence holds."""
    source_evidence: SourceEvidence | None = None
    """The fingerprint of the evidence and the binding it was taken under."""
    start: datetime
    """The start of the window, included (RFC 3339, UTC)."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    verdict: str
    """The comparison's answer: pass, fail or abstain."""
    workflow_id: str
    """The workflow the evidence is about (a deployment or graph, as the caller names it)."""


@attrs.frozen(kw_only=True)
class DecisionListResponse:
    """A page of retained decisions, newest first."""

    decisions: list[DecisionArtifact]
    """One page of decisions, newest first."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""
