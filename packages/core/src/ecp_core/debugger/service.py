"""The economic debugger: one tally of a window, shaped into timeline, cohorts and breakage."""

from collections.abc import Callable, Iterable
from typing import Any

from ecp_core.debugger.model import (
    MAX_WINDOW_EVENTS,
    METHOD_VERSION,
    Accounting,
    BreakageResponse,
    CohortRow,
    CohortsResponse,
    DebuggerQuery,
    DebuggerReport,
    Scope,
    StepRow,
    TimelineResponse,
    TimelineRow,
    VersionRow,
)
from ecp_core.debugger.tally import Grouping, Tally, TallyQuery, scalar_key
from ecp_core.errors import EvidenceWindowTooLarge, FieldError, ValidationFailed
from ecp_core.ports.debugger import DebuggerUnit
from ecp_core.ports.system import Clock

TIMELINE = frozenset({Grouping.TOTAL, Grouping.VERSION, Grouping.VERSION_WINDOW})
COHORTS = frozenset({Grouping.TOTAL, Grouping.VERSION, Grouping.VERSION_COHORT})
BREAKAGE = frozenset({Grouping.TOTAL, Grouping.VERSION, Grouping.VERSION_STEP})
REPORT = TIMELINE | COHORTS | BREAKAGE


def _exposure(row: VersionRow | StepRow) -> tuple[Any, ...]:
    """Most failed-run exposure first, then most repeated-attempt spend."""
    figures = row.accounting
    return (-figures.failure_tax_usd, -figures.repeated_attempt_usd, -figures.failed_runs)


class _Shaped:
    """A window's tallies sorted into the rows each answer needs."""

    def __init__(self, query: DebuggerQuery, tallies: Iterable[Tally], defined: set[str]) -> None:
        by_grouping: dict[Grouping, list[Tally]] = {grouping: [] for grouping in Grouping}
        for tally in tallies:
            by_grouping[tally.grouping].append(tally)
        total = by_grouping[Grouping.TOTAL]
        self.totals = Accounting.of(total[0] if total else Tally(grouping=Grouping.TOTAL))
        self.versions = tuple(
            sorted(
                (
                    VersionRow(
                        workflow_version=str(t.workflow_version),
                        outcome_definition=t.workflow_version in defined,
                        accounting=Accounting.of(t),
                    )
                    for t in by_grouping[Grouping.VERSION]
                ),
                key=lambda row: (_exposure(row), row.workflow_version),
            )
        )
        width = query.granularity.width
        self.timeline = tuple(
            sorted(
                (
                    TimelineRow(
                        workflow_version=str(t.workflow_version),
                        window_start=t.window_start,
                        window_end=t.window_start + width,
                        accounting=Accounting.of(t),
                    )
                    for t in by_grouping[Grouping.VERSION_WINDOW]
                    if t.window_start is not None
                ),
                key=lambda row: (row.window_start, row.workflow_version),
            )
        )
        self.cohorts = tuple(
            sorted(
                (
                    CohortRow(
                        workflow_version=str(t.workflow_version),
                        cohort=t.cohort,
                        accounting=Accounting.of(t),
                    )
                    for t in by_grouping[Grouping.VERSION_COHORT]
                ),
                key=lambda row: (row.workflow_version, scalar_key(row.cohort)),
            )
        )
        self.steps = tuple(
            sorted(
                (
                    StepRow(
                        workflow_version=str(t.workflow_version),
                        step_id=t.step_id,
                        accounting=Accounting.of(t),
                    )
                    for t in by_grouping[Grouping.VERSION_STEP]
                ),
                key=lambda row: (_exposure(row), row.workflow_version, scalar_key(row.step_id)),
            )
        )


class DebuggerService:
    """Answers the debugger routes for a tenant (``observed-accounting/1``)."""

    def __init__(self, uow: Callable[[], DebuggerUnit], clock: Clock) -> None:
        """Wire the service."""
        self._uow = uow
        self._clock = clock

    def _shape(
        self, tenant_id: str, query: DebuggerQuery, groupings: frozenset[Grouping]
    ) -> tuple[Scope, _Shaped]:
        if query.end <= query.start:
            raise ValidationFailed(
                "the window is empty",
                errors=[FieldError(loc=("end",), msg="must be after start")],
            )
        as_of = self._clock.now()
        tally_query = TallyQuery(
            workflow_id=query.workflow_id,
            workflow_version=query.workflow_version,
            start=query.start,
            end=query.end,
            as_of=as_of,
            groupings=groupings,
            granularity=query.granularity,
            dimension=query.dimension,
        )
        with self._uow() as uow:
            events = uow.evidence.count_executions(
                tenant_id, tally_query, limit=MAX_WINDOW_EVENTS + 1
            )
            if events > MAX_WINDOW_EVENTS:
                raise EvidenceWindowTooLarge(
                    f"the window holds more than {MAX_WINDOW_EVENTS:,} execution events; "
                    "narrow it (by version or time) so no total is truncated",
                    errors=[FieldError(loc=("start",), msg="window too large")],
                )
            tallies = uow.evidence.tally(tenant_id, tally_query)
            versions = {str(t.workflow_version) for t in tallies if t.grouping is Grouping.VERSION}
            defined = {
                version
                for version in versions
                if uow.evidence.definition(tenant_id, query.workflow_id, version) is not None
            }
        scope = Scope(
            workflow_id=query.workflow_id,
            workflow_version=query.workflow_version,
            start=query.start,
            end=query.end,
            as_of=as_of,
        )
        return scope, _Shaped(query, tallies, defined)

    def timeline(self, tenant_id: str, query: DebuggerQuery) -> TimelineResponse:
        """Cost, successful outcomes and failure tax by version and time window."""
        scope, shaped = self._shape(tenant_id, query, TIMELINE)
        return TimelineResponse(
            method_version=METHOD_VERSION,
            scope=scope,
            granularity=query.granularity,
            totals=shaped.totals,
            versions=shaped.versions,
            rows=shaped.timeline,
        )

    def cohorts(self, tenant_id: str, query: DebuggerQuery) -> CohortsResponse:
        """Cost per successful outcome and failure rate by subject or typed dimension."""
        scope, shaped = self._shape(tenant_id, query, COHORTS)
        return CohortsResponse(
            method_version=METHOD_VERSION,
            scope=scope,
            cohort=query.cohort,
            totals=shaped.totals,
            versions=shaped.versions,
            rows=shaped.cohorts,
        )

    def breakage(self, tenant_id: str, query: DebuggerQuery) -> BreakageResponse:
        """Versions and steps with the most failed-run exposure and repeated-attempt spend."""
        scope, shaped = self._shape(tenant_id, query, BREAKAGE)
        return BreakageResponse(
            method_version=METHOD_VERSION,
            scope=scope,
            totals=shaped.totals,
            versions=shaped.versions,
            steps=shaped.steps,
        )

    def report(self, tenant_id: str, query: DebuggerQuery) -> DebuggerReport:
        """The three views of one window, from one tally, with one set of totals."""
        scope, shaped = self._shape(tenant_id, query, REPORT)
        return DebuggerReport(
            method_version=METHOD_VERSION,
            scope=scope,
            granularity=query.granularity,
            cohort=query.cohort,
            totals=shaped.totals,
            versions=shaped.versions,
            timeline=shaped.timeline,
            cohorts=shaped.cohorts,
            steps=shaped.steps,
        )
