"""Version decisions (``interval-policy/1``): requests, artifacts and schedules."""

import enum
from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Constraint, Range, Text, checked
from ecp_core.evidence.model import Id
from ecp_core.wire import structure

METHOD_VERSION = "interval-policy/1"
CLAIM_CLASS = "observed_comparison"
INPUTS_VERSION = "run-economics/1"
SOURCE_BINDING = "stored-assertions/1"
SOURCE_TAGS = ("v2", "v3", "v4", "v5")
"""Capture-window identity, charge ownership, declared outcome maturity, charge revisions."""

DEFAULT_CONFIDENCE = 0.95
DEFAULT_COST_GROWTH = 0.10
MIN_SCHEDULE_SECONDS = 86_400


@attrs.frozen
class Fraction(Constraint):
    """A number in ``[0, 1]`` (or ``(0, 1)`` when ``open``)."""

    open: bool = False

    def check(self, value: float) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        if self.open and not 0 < value < 1:
            return "must lie strictly between 0 and 1"
        if not 0 <= value <= 1:
            return "must lie between 0 and 1"
        return None


@attrs.frozen
class NonNegative(Constraint):
    """A number of at least zero."""

    def check(self, value: float) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        return None if value >= 0 else "must not be negative"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ComparisonPolicy:
    """What a candidate must show.

    ``min_success_rate`` is required: missing or null makes the comparison abstain (zero is an
    explicit choice). ``max_cost_growth`` is the cost-growth tolerance on cost per accepted
    outcome (0.10: at most 10 percent dearer); ``max_success_rate_drop`` the largest fall of the
    success rate tolerated (0: none).
    """

    min_success_rate: Annotated[float, Fraction()] | None = None
    confidence_level: Annotated[float, Fraction(open=True)] = DEFAULT_CONFIDENCE
    max_cost_growth: Annotated[float, NonNegative()] = DEFAULT_COST_GROWTH
    max_success_rate_drop: Annotated[float, Fraction()] = 0.0
    min_runs: Annotated[int, Range(2, 1_000_000)] = 30
    min_outcome_coverage: Annotated[float, Fraction()] = 0.9
    allow_estimated_cost: bool = False


@attrs.frozen(kw_only=True, field_transformer=checked)
class CompareRequest:
    """Body of ``POST /v1/decisions/compare``: two exact versions over one half-open window.

    With an inventory named for both versions, each side's evidence is what its inventory's
    inclusive capture interval holds, checked against the inventory.
    """

    workflow_id: Id
    baseline_version: Id
    candidate_version: Id
    start: Annotated[datetime, AwareUtc()]
    end: Annotated[datetime, AwareUtc()]
    policy: ComparisonPolicy = attrs.field(factory=ComparisonPolicy)
    baseline_inventory_id: Id | None = None
    candidate_inventory_id: Id | None = None


class Verdict(enum.StrEnum):
    """The comparison's answer."""

    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    ABSTAIN = "abstain"


class RecommendedAction(enum.StrEnum):
    """What to do next."""

    REVIEW_CANDIDATE = "review_candidate"
    KEEP_BASELINE = "keep_baseline"
    COLLECT_MORE_EVIDENCE = "collect_more_evidence"


class ConstraintStatus(enum.StrEnum):
    """Where an interval lies against its limit."""

    PASS = "pass"  # noqa: S105 - a status, not a password
    FAIL = "fail"
    UNRESOLVED = "unresolved"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConstraintResult:
    """One constraint: its estimate, two-sided interval, limit and status."""

    name: str
    method: str
    estimate: float | None
    interval: tuple[float, float] | None
    limit: float | None
    status: ConstraintStatus
    additional_runs_required: int | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CalculationRow:
    """A ``run-economics/1`` row: identical runs collapsed, ``runs`` counting them."""

    cost_usd: str | None
    cost_measurement: str
    accepted: bool | None
    outcome_measurement: str | None
    runs: int


@attrs.frozen(kw_only=True, field_transformer=checked)
class CalculationInputs:
    """Per-run economics behind the figures, baseline and candidate separately."""

    version: str
    baseline: tuple[CalculationRow, ...]
    candidate: tuple[CalculationRow, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class EvidenceCounts:
    """What one side's selected evidence holds."""

    runs: int
    execution_events: int
    unattributed_events: int
    outcome_assertions: int
    provisional_outcomes: int
    charge_revisions: int
    source_windows: int
    missing_runs: int


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceEvidenceCounts:
    """Evidence counts of both sides."""

    baseline: EvidenceCounts
    candidate: EvidenceCounts


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceEvidence:
    """The fingerprint of the selected evidence and the binding rules it was taken under."""

    binding: str
    tags: tuple[str, ...]
    fingerprint: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeSemantics:
    """Digests of each version's outcome definition (null: none)."""

    baseline: str | None
    candidate: str | None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionArtifact:
    """An immutable comparison result; identical request and evidence return it again."""

    decision_id: str
    revision: int
    tenant_id: str
    workflow_id: str
    baseline_version: str
    candidate_version: str
    start: Annotated[datetime, AwareUtc()]
    end: Annotated[datetime, AwareUtc()]
    verdict: Verdict
    recommended_action: RecommendedAction
    claim_class: str
    method_version: str
    abstain_reasons: tuple[str, ...]
    limitations: tuple[str, ...]
    constraints: tuple[ConstraintResult, ...]
    additional_runs_required: int | None
    policy: ComparisonPolicy
    request_digest: str
    as_of: Annotated[datetime, AwareUtc()]
    created_at: Annotated[datetime, AwareUtc()]
    requested_by: str
    schedule_id: str | None = None
    # Historical artifacts may lack these; they read as null (never invented).
    source_evidence: SourceEvidence | None = None
    source_delivery: SourceEvidenceCounts | None = None
    outcome_semantics: OutcomeSemantics | None = None
    calculation_inputs: CalculationInputs | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionList:
    """A page of retained decisions, newest first."""

    decisions: tuple[DecisionArtifact, ...]
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateScheduleRequest:
    """Body of ``POST /v1/decision-schedules``.

    A comparison repeated every ``interval_seconds`` over the trailing ``window_seconds``.
    """

    workflow_id: Id
    baseline_version: Id
    candidate_version: Id
    interval_seconds: Annotated[int, Range(MIN_SCHEDULE_SECONDS, 366 * 86_400)]
    window_seconds: Annotated[int, Range(3600, 366 * 86_400)]
    policy: ComparisonPolicy = attrs.field(factory=ComparisonPolicy)
    name: Annotated[str, Text(1, 200, trimmed=True)] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionSchedule:
    """A stored schedule; ``next_run_at`` is the next occurrence to claim."""

    schedule_id: str
    tenant_id: str
    workflow_id: str
    baseline_version: str
    candidate_version: str
    interval_seconds: int
    window_seconds: int
    policy: ComparisonPolicy
    name: str | None
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str
    next_run_at: Annotated[datetime, AwareUtc()]
    last_run_at: Annotated[datetime, AwareUtc()] | None = None
    last_decision_id: str | None = None
    last_error: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ScheduleList:
    """The tenant's schedules."""

    schedules: tuple[DecisionSchedule, ...]


def method_fields(payload: dict[str, Any]) -> tuple[str, str]:
    """(claim_class, method_version) of a stored payload; unclassified ones are legacy."""
    claim = payload.get("claim_class")
    method = payload.get("method_version")
    return (
        claim if isinstance(claim, str) and claim else "legacy_unclassified",
        method if isinstance(method, str) and method else "legacy_unversioned",
    )


def read_artifact(payload: dict[str, Any]) -> DecisionArtifact:
    """A retained artifact from its stored JSON.

    Older payloads without a claim class or method read as ``legacy_unclassified`` and
    ``legacy_unversioned``; without calculation inputs or evidence bindings, as null.
    """
    claim, method = method_fields(payload)
    return structure({**payload, "claim_class": claim, "method_version": method}, DecisionArtifact)


ALREADY_RETAINED = "this comparison over this evidence is already retained"
"""Why a second artifact of one request over one evidence (request digest, fingerprint) fails."""
