"""What the economic debugger answers (``observed-accounting/1``)."""

import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Text, checked
from ecp_core.debugger.tally import Granularity, Tally
from ecp_core.money import EXACT, ratio

METHOD_VERSION = "observed-accounting/1"
MAX_WINDOW_EVENTS = 50_000
"""Execution events one debugger request may aggregate (more is refused, never truncated)."""

SUBJECT = "subject_id"
DIMENSION_PREFIX = "dimension:"
COHORT_PATTERN = r"subject_id|dimension:[A-Za-z0-9_.:-]{1,64}"


@attrs.frozen(kw_only=True, field_transformer=checked)
class DebuggerQuery:
    """The query string of every debugger route.

    A workflow, optionally one version, and a half-open ``[start, end)`` window on
    ``occurred_at``. ``granularity`` sizes timeline windows; ``cohort`` is ``subject_id`` or
    ``dimension:<key>``.
    """

    workflow_id: Annotated[str, Text(1, 256)]
    start: Annotated[datetime, AwareUtc()]
    end: Annotated[datetime, AwareUtc()]
    workflow_version: Annotated[str, Text(1, 256)] | None = None
    granularity: Granularity = Granularity.DAY
    cohort: Annotated[str, Text(1, 80, pattern=COHORT_PATTERN)] = SUBJECT

    @property
    def dimension(self) -> str | None:
        """The dimension key cohorts group by, or None for subject_id."""
        match = re.fullmatch(r"dimension:(.+)", self.cohort)
        return None if match is None else match.group(1)


@attrs.frozen(kw_only=True, field_transformer=checked)
class Incompleteness:
    """Evidence that is missing, counted and shown as such (never as zero).

    ``complete`` is false when any charge has an unknown cost, any run has no resolvable
    outcome, or any event has no run. Inferred and provisional outcomes are shown but do not
    make a group incomplete.
    """

    complete: bool
    """False when a charge has an unknown cost, a run no resolvable outcome, or an event no run."""
    unknown_cost_events: int
    """Charges whose cost is unknown."""
    unresolved_runs: int
    """Runs without a resolvable outcome."""
    unattributed_events: int
    """Events that name no run."""
    inferred_outcome_runs: int
    """Runs whose outcome was inferred, not observed."""
    provisional_outcome_runs: int
    """Runs whose outcome may still change."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Accounting:
    """Cost and outcomes of one group.

    ``known_cost_usd`` = measured + estimated. ``cost_per_successful_outcome_usd`` is null when
    no run succeeded or any cost is unknown (a partial cost would understate it);
    ``failure_rate`` is failed over resolved runs, null when none resolved. Ratios are rounded
    half-even to 12 decimal places; sums are exact.
    """

    events: int
    """Execution events of the group."""
    summary_events: int
    """Structural events, which carry no money."""
    runs: int
    """Runs of the group."""
    successful_runs: int
    """Runs whose outcome counts as success."""
    failed_runs: int
    """Runs whose outcome does not."""
    known_cost_usd: Decimal
    measured_cost_usd: Decimal
    estimated_cost_usd: Decimal
    failure_tax_usd: Decimal
    repeated_attempt_events: int
    """Events of an attempt after the first."""
    repeated_attempt_usd: Decimal
    cost_per_successful_outcome_usd: Decimal | None
    failure_rate: Decimal | None
    incomplete: Incompleteness
    """The evidence that is missing, counted."""

    @classmethod
    def of(cls, tally: Tally) -> "Accounting":
        """Derive the figures of a group from its tally."""
        known = EXACT.add(tally.measured_usd, tally.estimated_usd)
        resolved = tally.successful_runs + tally.failed_runs
        complete = not (
            tally.unknown_cost_events or tally.unresolved_runs or tally.unattributed_events
        )
        return cls(
            events=tally.events,
            summary_events=tally.summary_events,
            runs=tally.runs,
            successful_runs=tally.successful_runs,
            failed_runs=tally.failed_runs,
            known_cost_usd=known,
            measured_cost_usd=tally.measured_usd,
            estimated_cost_usd=tally.estimated_usd,
            failure_tax_usd=tally.failure_tax_usd,
            repeated_attempt_events=tally.repeated_attempt_events,
            repeated_attempt_usd=tally.repeated_attempt_usd,
            cost_per_successful_outcome_usd=(
                None if tally.unknown_cost_events else ratio(known, tally.successful_runs)
            ),
            failure_rate=ratio(tally.failed_runs, resolved),
            incomplete=Incompleteness(
                complete=complete,
                unknown_cost_events=tally.unknown_cost_events,
                unresolved_runs=tally.unresolved_runs,
                unattributed_events=tally.unattributed_events,
                inferred_outcome_runs=tally.inferred_outcome_runs,
                provisional_outcome_runs=tally.provisional_outcome_runs,
            ),
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class Scope:
    """What was asked: the workflow, the version filter and the window."""

    workflow_id: str
    workflow_version: str | None
    start: Annotated[datetime, AwareUtc()]
    """The start of the window, included (RFC 3339, UTC)."""
    end: Annotated[datetime, AwareUtc()]
    """The end of the window, excluded (RFC 3339, UTC)."""
    as_of: Annotated[datetime, AwareUtc()]
    """The time the evidence was read at (RFC 3339, UTC)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class VersionRow:
    """One workflow version's accounting and whether it has an outcome definition."""

    workflow_version: str
    outcome_definition: bool
    """Whether the version has an outcome definition."""
    accounting: Accounting
    """The version's figures."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TimelineRow:
    """One version in one UTC time window ``[window_start, window_end)``."""

    workflow_version: str
    window_start: Annotated[datetime, AwareUtc()]
    """The start of the time window, included (RFC 3339, UTC)."""
    window_end: Annotated[datetime, AwareUtc()]
    """The end of the time window, excluded (RFC 3339, UTC)."""
    accounting: Accounting
    """The figures of the version in the window."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CohortRow:
    """One version and one cohort value (null: events that do not carry it)."""

    workflow_version: str
    cohort: Any
    """The cohort value (a subject id or a dimension's value); null: events without it."""
    accounting: Accounting
    """The figures of the version and cohort."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class StepRow:
    """One version and one step (null: events without a step)."""

    workflow_version: str
    step_id: str | None
    """The step; null: events without a step."""
    accounting: Accounting
    """The figures of the version and step."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TimelineResponse:
    """Cost, successful outcomes and failure tax by version and time window."""

    method_version: str
    """The version of the debugger's method."""
    scope: Scope
    """What was asked: the workflow, the version filter and the window."""
    granularity: Granularity
    """The width of each time window: an hour or a day."""
    totals: Accounting
    """The figures over every version in the window."""
    versions: tuple[VersionRow, ...]
    """Each workflow version's figures."""
    rows: tuple[TimelineRow, ...]
    """Each version in each time window."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CohortsResponse:
    """Cost per successful outcome and failure rate by subject or typed dimension."""

    method_version: str
    """The version of the debugger's method."""
    scope: Scope
    """What was asked: the workflow, the version filter and the window."""
    cohort: str
    """What cohorts group by: `subject_id` or `dimension:<key>`."""
    totals: Accounting
    """The figures over every version in the window."""
    versions: tuple[VersionRow, ...]
    """Each workflow version's figures."""
    rows: tuple[CohortRow, ...]
    """Each version and cohort value."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class BreakageResponse:
    """Versions and steps ordered by failed-run exposure, then repeated-attempt spend."""

    method_version: str
    """The version of the debugger's method."""
    scope: Scope
    """What was asked: the workflow, the version filter and the window."""
    totals: Accounting
    """The figures over every version in the window."""
    versions: tuple[VersionRow, ...]
    """Each workflow version's figures."""
    steps: tuple[StepRow, ...]
    """Each version and step, by failed-run exposure, then repeated-attempt spend."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DebuggerReport:
    """Timeline, cohorts and breakage of one window, with one set of totals."""

    method_version: str
    """The version of the debugger's method."""
    scope: Scope
    """What was asked: the workflow, the version filter and the window."""
    granularity: Granularity
    """The width of each time window: an hour or a day."""
    cohort: str
    """What cohorts group by: `subject_id` or `dimension:<key>`."""
    totals: Accounting
    """The figures over every version in the window."""
    versions: tuple[VersionRow, ...]
    """Each workflow version's figures."""
    timeline: tuple[TimelineRow, ...]
    """Each version in each time window."""
    cohorts: tuple[CohortRow, ...]
    """Each version and cohort value."""
    steps: tuple[StepRow, ...]
    """Each version and step, by failed-run exposure, then repeated-attempt spend."""
