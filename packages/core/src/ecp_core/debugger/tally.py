"""The debugger's aggregation, defined once in plain Python.

Every execution event in the window is classified (its price, its run's outcome status) and then
counted into the requested groupings. The memory adapter runs this module; the PostgreSQL adapter
runs the same rules in SQL, and the contract suite proves the two agree.

Rules (``observed-accounting/1``):

- An event's price is its charge's latest revision (greatest ``revised_at``, then ``event_id``)
  when one exists, else its own ``cost_usd``. ``summary`` events carry no money and are never
  "missing cost". A ``charge`` with no known price counts as an unknown-cost event.
- A run's status comes from its version's outcome definition: the deciding outcome is the
  latest (greatest ``asserted_at``, then ``event_id``) assertion of the defined outcome type for
  that run and version with ``asserted_at`` not after ``as_of``. No definition, no deciding
  outcome, or a value the predicate cannot judge (a threshold on a non-number) leave the run
  ``unresolved``. Events without a ``run_id`` are unattributed and have no status.
- A run is identified by (workflow_version, run_id): run counts are distinct such pairs.
- Repeated-attempt spend is the price of charges with ``attempt`` greater than 1.
"""

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs

from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.money import EXACT, ZERO
from ecp_core.types import CostMeasurement


class Granularity(enum.StrEnum):
    """Width of a timeline window (UTC)."""

    HOUR = "hour"
    DAY = "day"

    @property
    def width(self) -> timedelta:
        """The window's length."""
        return timedelta(hours=1) if self is Granularity.HOUR else timedelta(days=1)

    def floor(self, moment: datetime) -> datetime:
        """The start of the window holding ``moment``."""
        moment = moment.replace(minute=0, second=0, microsecond=0)
        return moment if self is Granularity.HOUR else moment.replace(hour=0)


class Grouping(enum.StrEnum):
    """The groupings a tally can produce (SQL grouping sets)."""

    TOTAL = "total"
    VERSION = "version"
    VERSION_WINDOW = "version_window"
    VERSION_STEP = "version_step"
    VERSION_COHORT = "version_cohort"


class OutcomeStatus(enum.StrEnum):
    """How a run ended by its version's outcome definition: what its work (and its cost) bought."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNRESOLVED = "unresolved"


@attrs.frozen(kw_only=True)
class TallyQuery:
    """Which events to count and how to group them.

    ``dimension`` None groups cohorts by ``subject_id``, else by that key of ``dimensions``.
    """

    workflow_id: str
    workflow_version: str | None
    start: datetime
    end: datetime
    as_of: datetime
    groupings: frozenset[Grouping]
    granularity: Granularity = Granularity.DAY
    dimension: str | None = None


@attrs.frozen(kw_only=True)
class Tally:
    """Counts and exact sums for one group; key fields outside the grouping are None."""

    grouping: Grouping
    workflow_version: str | None = None
    window_start: datetime | None = None
    step_id: str | None = None
    cohort: Any = None
    events: int = 0
    summary_events: int = 0
    unattributed_events: int = 0
    runs: int = 0
    successful_runs: int = 0
    failed_runs: int = 0
    unresolved_runs: int = 0
    inferred_outcome_runs: int = 0
    provisional_outcome_runs: int = 0
    measured_usd: Decimal = ZERO
    estimated_usd: Decimal = ZERO
    unknown_cost_events: int = 0
    failure_tax_usd: Decimal = ZERO
    repeated_attempt_events: int = 0
    repeated_attempt_usd: Decimal = ZERO

    def key(self) -> tuple[Grouping, str | None, datetime | None, str | None, Any]:
        """The group's identity (cohort values normalised)."""
        return (
            self.grouping,
            self.workflow_version,
            self.window_start,
            self.step_id,
            scalar_key(self.cohort),
        )


def normalize_scalar(value: Any) -> Any:  # noqa: ANN401 - a JSON scalar
    """One spelling per typed value: integral floats become ints (``1.0`` → ``1``)."""
    if isinstance(value, float) and value.is_integer():
        return int(Decimal(repr(value)))  # the integer as written, not its binary expansion
    return value


def scalar_key(value: Any) -> tuple[int, Any]:  # noqa: ANN401 - a JSON scalar
    """A sortable, type-aware key: ``True`` and ``1`` differ, ``1`` and ``1.0`` do not.

    Missing sorts first, then booleans, numbers and strings.
    """
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int | float):
        return (2, number(value))
    return (3, value)


def number(value: float) -> Decimal:
    """The exact decimal a JSON number was written as (floats by their shortest repr)."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def judge(predicate: SuccessPredicate, value: Any) -> OutcomeStatus:  # noqa: ANN401 - a JSON scalar
    """Apply a success predicate to an outcome value."""
    if predicate.kind is PredicateKind.EQUALS:
        return (
            OutcomeStatus.SUCCESS
            if scalar_key(value) == scalar_key(predicate.value)
            else OutcomeStatus.FAILURE
        )
    if isinstance(value, bool) or not isinstance(value, int | float) or predicate.threshold is None:
        return OutcomeStatus.UNRESOLVED
    compare: Callable[[Decimal, Decimal], bool] = {
        PredicateKind.AT_LEAST: Decimal.__ge__,
        PredicateKind.GREATER_THAN: Decimal.__gt__,
        PredicateKind.AT_MOST: Decimal.__le__,
        PredicateKind.LESS_THAN: Decimal.__lt__,
    }[predicate.kind]
    return (
        OutcomeStatus.SUCCESS
        if compare(number(value), predicate.threshold)
        else OutcomeStatus.FAILURE
    )


@attrs.frozen
class OutcomeVerdict:
    """A run's status and how its deciding outcome was known."""

    status: OutcomeStatus
    inferred: bool = False
    provisional: bool = False


def outcome_verdicts(
    outcomes: Iterable[OutcomeEvent],
    definitions: Mapping[str, OutcomeDefinition],
    as_of: datetime,
) -> dict[tuple[str, str], OutcomeVerdict]:
    """Status by (workflow_version, run_id) for runs with a deciding outcome.

    ``definitions`` maps workflow_version to its definition. Runs absent from the result are
    unresolved.
    """
    deciding: dict[tuple[str, str], OutcomeEvent] = {}
    for outcome in outcomes:
        definition = definitions.get(outcome.workflow_version)
        if definition is None or outcome.outcome_type != definition.outcome_type:
            continue
        if outcome.asserted_at > as_of:
            continue
        key = (outcome.workflow_version, outcome.run_id)
        current = deciding.get(key)
        if current is None or (outcome.asserted_at, outcome.event_id) > (
            current.asserted_at,
            current.event_id,
        ):
            deciding[key] = outcome
    return {
        key: OutcomeVerdict(
            status=judge(definitions[key[0]].predicate, outcome.value),
            inferred=outcome.outcome_measurement is OutcomeMeasurement.INFERRED,
            provisional=outcome.maturity is OutcomeMaturity.PROVISIONAL,
        )
        for key, outcome in deciding.items()
    }


def latest_revisions(revisions: Iterable[ChargeRevision]) -> dict[str, ChargeRevision]:
    """The pricing revision of each charge id."""
    latest: dict[str, ChargeRevision] = {}
    for revision in revisions:
        current = latest.get(revision.charge_id)
        if current is None or (revision.revised_at, revision.event_id) > (
            current.revised_at,
            current.event_id,
        ):
            latest[revision.charge_id] = revision
    return latest


def price(
    event: ExecutionEvent, revisions: Mapping[str, ChargeRevision]
) -> tuple[Decimal | None, CostMeasurement]:
    """The event's cost and how it was known, after charge revisions."""
    revision = revisions.get(event.charge_id) if event.charge_id is not None else None
    if revision is not None:
        return revision.cost_usd, revision.cost_measurement
    return event.cost_usd, event.cost_measurement


def in_window(event: ExecutionEvent, query: TallyQuery) -> bool:
    """Whether ``event`` belongs to the query's workflow, version and half-open window."""
    return (
        event.workflow_id == query.workflow_id
        and (query.workflow_version is None or event.workflow_version == query.workflow_version)
        and query.start <= event.occurred_at < query.end
    )


class _Group:
    """Running totals of one group."""

    def __init__(self) -> None:
        self.events = self.summary = self.unattributed = self.unknown = self.repeated = 0
        self.measured, self.estimated, self.tax, self.repeated_usd = ZERO, ZERO, ZERO, ZERO
        self.runs: dict[tuple[str, str], OutcomeVerdict] = {}

    def add(
        self,
        event: ExecutionEvent,
        verdict: OutcomeVerdict | None,
        cost: Decimal | None,
        measurement: CostMeasurement,
    ) -> None:
        self.events += 1
        if event.run_id is None:
            self.unattributed += 1
        else:
            self.runs[(event.workflow_version, event.run_id)] = verdict or OutcomeVerdict(
                OutcomeStatus.UNRESOLVED
            )
        if event.cost_role is CostRole.SUMMARY:
            self.summary += 1
            return
        if cost is None:
            self.unknown += 1
        elif measurement is CostMeasurement.MEASURED:
            self.measured = EXACT.add(self.measured, cost)
        elif measurement is CostMeasurement.ESTIMATED:
            self.estimated = EXACT.add(self.estimated, cost)
        if cost is not None and verdict is not None and verdict.status is OutcomeStatus.FAILURE:
            self.tax = EXACT.add(self.tax, cost)
        if event.attempt > 1:
            self.repeated += 1
            if cost is not None:
                self.repeated_usd = EXACT.add(self.repeated_usd, cost)

    def tally(self, grouping: Grouping, key: Mapping[str, Any]) -> Tally:
        verdicts = list(self.runs.values())
        return Tally(
            grouping=grouping,
            **key,
            events=self.events,
            summary_events=self.summary,
            unattributed_events=self.unattributed,
            runs=len(verdicts),
            successful_runs=sum(v.status is OutcomeStatus.SUCCESS for v in verdicts),
            failed_runs=sum(v.status is OutcomeStatus.FAILURE for v in verdicts),
            unresolved_runs=sum(v.status is OutcomeStatus.UNRESOLVED for v in verdicts),
            inferred_outcome_runs=sum(v.inferred for v in verdicts),
            provisional_outcome_runs=sum(v.provisional for v in verdicts),
            measured_usd=self.measured,
            estimated_usd=self.estimated,
            unknown_cost_events=self.unknown,
            failure_tax_usd=self.tax,
            repeated_attempt_events=self.repeated,
            repeated_attempt_usd=self.repeated_usd,
        )


def _group_key(grouping: Grouping, event: ExecutionEvent, query: TallyQuery) -> dict[str, Any]:
    if grouping is Grouping.TOTAL:
        return {}
    key: dict[str, Any] = {"workflow_version": event.workflow_version}
    if grouping is Grouping.VERSION_WINDOW:
        key["window_start"] = query.granularity.floor(event.occurred_at)
    elif grouping is Grouping.VERSION_STEP:
        key["step_id"] = event.step_id
    elif grouping is Grouping.VERSION_COHORT:
        cohort = (
            event.subject_id if query.dimension is None else event.dimensions.get(query.dimension)
        )
        key["cohort"] = normalize_scalar(cohort)
    return key


def tally(
    query: TallyQuery,
    executions: Iterable[ExecutionEvent],
    outcomes: Iterable[OutcomeEvent],
    revisions: Iterable[ChargeRevision],
    definitions: Sequence[OutcomeDefinition],
) -> list[Tally]:
    """Count the tenant's evidence into the query's groupings (the reference implementation).

    The inputs are one tenant's stored evidence; anything outside the query is ignored.
    """
    by_version = {d.workflow_version: d for d in definitions if d.workflow_id == query.workflow_id}
    verdicts = outcome_verdicts(
        (o for o in outcomes if o.workflow_id == query.workflow_id), by_version, query.as_of
    )
    pricing = latest_revisions(revisions)
    groups: dict[tuple[Grouping, tuple[tuple[str, Any], ...]], tuple[dict[str, Any], _Group]] = {}
    for event in executions:
        if not in_window(event, query):
            continue
        verdict = (
            None
            if event.run_id is None
            else verdicts.get(
                (event.workflow_version, event.run_id), OutcomeVerdict(OutcomeStatus.UNRESOLVED)
            )
        )
        cost, measurement = price(event, pricing)
        for grouping in query.groupings:
            key = _group_key(grouping, event, query)
            identity = (grouping, tuple((name, scalar_key(value)) for name, value in key.items()))
            entry = groups.get(identity)
            if entry is None:
                entry = groups[identity] = (key, _Group())
            entry[1].add(event, verdict, cost, measurement)
    return [group.tally(identity[0], key) for identity, (key, group) in groups.items()]
