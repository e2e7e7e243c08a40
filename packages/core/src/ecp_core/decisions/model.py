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
RANDOMIZED_CLAIM_CLASS = "randomized_comparison"
"""The claim class of a comparison restricted to a rollout's arms (ADR 0095)."""
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
    """The lowest success rate the candidate may have; null makes the comparison abstain."""
    confidence_level: Annotated[float, Fraction(open=True)] = DEFAULT_CONFIDENCE
    """The confidence level of the intervals (0.95: 95 percent)."""
    max_cost_growth: Annotated[float, NonNegative()] = DEFAULT_COST_GROWTH
    """How much dearer per accepted outcome the candidate may be (0.10: 10 percent)."""
    max_success_rate_drop: Annotated[float, Fraction()] = 0.0
    """The largest fall of the success rate tolerated (0: none)."""
    min_runs: Annotated[int, Range(2, 1_000_000)] = 30
    """The fewest runs per side a verdict needs."""
    min_outcome_coverage: Annotated[float, Fraction()] = 0.9
    """The smallest share of runs that must have a known outcome."""
    allow_estimated_cost: bool = False
    """Whether estimated costs count as evidence (otherwise only measured ones do)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CompareRequest:
    """Body of ``POST /v1/decisions/compare``: two exact versions over one half-open window.

    With an inventory named for both versions, each side's evidence is what its inventory's
    inclusive capture interval holds, checked against the inventory.
    """

    workflow_id: Id
    baseline_version: Id
    """The workflow version compared against (the one in use)."""
    candidate_version: Id
    """The workflow version that may replace the baseline."""
    start: Annotated[datetime, AwareUtc()]
    """The start of the window, included (RFC 3339)."""
    end: Annotated[datetime, AwareUtc()]
    """The end of the window, excluded (RFC 3339)."""
    policy: ComparisonPolicy = attrs.field(factory=ComparisonPolicy)
    """What the candidate must show."""
    baseline_inventory_id: Id | None = None
    """The source inventory that bounds the baseline's evidence."""
    candidate_inventory_id: Id | None = None
    """The source inventory that bounds the candidate's evidence."""
    rollout_id: Id | None = None
    """Restrict each side to the units this rollout assigned to its version's arm only; both
    versions must be arms of it. The result's claim class is `randomized_comparison`."""


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


class RolloutRecommendation(enum.StrEnum):
    """What a randomized comparison says to do with its rollout."""

    PROMOTE = "promote"
    """The candidate passed: end the rollout promoting the candidate's arm."""
    ROLL_BACK = "roll_back"
    """The candidate failed: end the rollout promoting the baseline's arm."""
    CONTINUE = "continue"
    """No verdict yet: keep the rollout running and collect more evidence."""


class ConstraintStatus(enum.StrEnum):
    """Where an interval lies against its limit."""

    PASS = "pass"  # noqa: S105 - a status, not a password
    FAIL = "fail"
    UNRESOLVED = "unresolved"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConstraintResult:
    """One constraint: its estimate, two-sided interval, limit and status."""

    name: str
    """The constraint."""
    method: str
    """How its interval was computed."""
    estimate: float | None
    """The point estimate; null without evidence."""
    interval: tuple[float, float] | None
    """The two-sided interval, lower and upper bound; null without evidence."""
    limit: float | None
    """The limit the interval is held against."""
    status: ConstraintStatus
    """Where the interval lies against the limit."""
    additional_runs_required: int | None = None
    """About how many more runs would resolve it, when unresolved."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CalculationRow:
    """A ``run-economics/1`` row: identical runs collapsed, ``runs`` counting them."""

    cost_usd: str | None
    """The run's cost in USD, as a decimal string; null when unknown."""
    cost_measurement: str
    """How the cost is known: measured, estimated or not at all."""
    accepted: bool | None
    """Whether the run's outcome was accepted; null when unknown."""
    outcome_measurement: str | None
    """How the outcome is known."""
    runs: int
    """How many identical runs the row stands for."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CalculationInputs:
    """Per-run economics behind the figures, baseline and candidate separately."""

    version: str
    """The format of the rows (`run-economics/1`)."""
    baseline: tuple[CalculationRow, ...]
    """The baseline's rows."""
    candidate: tuple[CalculationRow, ...]
    """The candidate's rows."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class EvidenceCounts:
    """What one side's selected evidence holds."""

    runs: int
    """Runs selected."""
    execution_events: int
    """Execution events of those runs."""
    unattributed_events: int
    """Events that name no run."""
    outcome_assertions: int
    """Outcome assertions."""
    provisional_outcomes: int
    """Outcome assertions that are not final yet."""
    charge_revisions: int
    """Charge revisions."""
    source_windows: int
    """Source windows of the inventory."""
    missing_runs: int
    """Runs the inventory names that have no evidence."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceEvidenceCounts:
    """Evidence counts of both sides."""

    baseline: EvidenceCounts
    """The baseline's counts."""
    candidate: EvidenceCounts
    """The candidate's counts."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceEvidence:
    """The fingerprint of the selected evidence and the binding rules it was taken under."""

    binding: str
    """The rule that binds evidence to a version."""
    tags: tuple[str, ...]
    """The binding tags the evidence was selected by."""
    fingerprint: str
    """The fingerprint of the selected evidence."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeSemantics:
    """Digests of each version's outcome definition (null: none)."""

    baseline: str | None
    """The digest of the baseline's outcome definition; null: none."""
    candidate: str | None
    """The digest of the candidate's outcome definition; null: none."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionArtifact:
    """An immutable comparison result; identical request and evidence return it again."""

    decision_id: str
    """The decision's id."""
    revision: int
    """The revision of the decision; new evidence for the same request adds one."""
    tenant_id: str
    workflow_id: str
    baseline_version: str
    """The workflow version compared against (the one in use)."""
    candidate_version: str
    """The workflow version that may replace the baseline."""
    start: Annotated[datetime, AwareUtc()]
    """The start of the window, included (RFC 3339, UTC)."""
    end: Annotated[datetime, AwareUtc()]
    """The end of the window, excluded (RFC 3339, UTC)."""
    verdict: Verdict
    """The comparison's answer: pass, fail or abstain."""
    recommended_action: RecommendedAction
    """What to do next."""
    claim_class: str
    """What kind of claim the verdict makes."""
    method_version: str
    """The version of the comparison method."""
    abstain_reasons: tuple[str, ...]
    """Why the comparison abstained, as codes."""
    limitations: tuple[str, ...]
    """What the verdict does not cover."""
    constraints: tuple[ConstraintResult, ...]
    """Each constraint: estimate, interval, limit and status."""
    additional_runs_required: int | None
    """About how many more runs would allow a verdict, when it abstains."""
    policy: ComparisonPolicy
    """The policy the candidate was held to."""
    request_digest: str
    """The digest of the request; the same request and evidence give the same decision."""
    as_of: Annotated[datetime, AwareUtc()]
    """The time the evidence was read at (RFC 3339, UTC)."""
    created_at: Annotated[datetime, AwareUtc()]
    requested_by: str
    schedule_id: str | None = None
    """The schedule that made the comparison, if one did."""
    # Historical artifacts may lack these; they read as null (never invented).
    source_evidence: SourceEvidence | None = None
    """The fingerprint of the evidence and the binding it was taken under."""
    source_delivery: SourceEvidenceCounts | None = None
    """What each side's evidence holds."""
    outcome_semantics: OutcomeSemantics | None = None
    """The digests of the outcome definitions."""
    calculation_inputs: CalculationInputs | None = None
    """The per-run economics behind the figures."""
    rollout_id: str | None = None
    """The rollout whose arms the comparison was restricted to; null: an observed comparison."""
    rollout_recommendation: RolloutRecommendation | None = None
    """With a rollout: promote the candidate, roll back to the baseline or continue."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionListResponse:
    """A page of retained decisions, newest first."""

    decisions: tuple[DecisionArtifact, ...]
    """One page of decisions, newest first."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateScheduleRequest:
    """Body of ``POST /v1/decision-schedules``.

    A comparison repeated every ``interval_seconds`` over the trailing ``window_seconds``.
    """

    workflow_id: Id
    baseline_version: Id
    """The workflow version compared against (the one in use)."""
    candidate_version: Id
    """The workflow version that may replace the baseline."""
    interval_seconds: Annotated[int, Range(MIN_SCHEDULE_SECONDS, 366 * 86_400)]
    """How often to compare, in seconds."""
    window_seconds: Annotated[int, Range(3600, 366 * 86_400)]
    """The trailing window each comparison covers, in seconds."""
    policy: ComparisonPolicy = attrs.field(factory=ComparisonPolicy)
    """What the candidate must show."""
    name: Annotated[str, Text(1, 200, trimmed=True)] | None = None
    """A name for the schedule."""
    rollout_id: Id | None = None
    """Watch this rollout: each comparison is restricted to its arms and recommends promoting,
    rolling back or continuing; both versions must be arms of it."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionSchedule:
    """A stored schedule; ``next_run_at`` is the next occurrence to claim."""

    schedule_id: str
    """The schedule's id."""
    tenant_id: str
    workflow_id: str
    baseline_version: str
    """The workflow version compared against (the one in use)."""
    candidate_version: str
    """The workflow version that may replace the baseline."""
    interval_seconds: int
    """How often to compare, in seconds."""
    window_seconds: int
    """The trailing window each comparison covers, in seconds."""
    policy: ComparisonPolicy
    """What the candidate must show."""
    name: str | None
    """A name for the schedule."""
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str
    next_run_at: Annotated[datetime, AwareUtc()]
    """The next comparison's time (RFC 3339, UTC)."""
    last_run_at: Annotated[datetime, AwareUtc()] | None = None
    """When it last compared (RFC 3339, UTC)."""
    last_decision_id: str | None = None
    """The decision the last comparison made."""
    last_error: str | None = None
    """Why the last comparison failed, if it did."""
    rollout_id: str | None = None
    """The rollout the schedule watches; null: none."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ScheduleListResponse:
    """The tenant's schedules."""

    schedules: tuple[DecisionSchedule, ...]
    """The tenant's schedules."""


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
