"""The economics page: where the money goes, and the version decisions (ADR 0085).

``/console/economics`` asks the debugger what the API's ``GET /v1/debugger/report`` asks
(``debugger_read``): one workflow's cost and outcomes over a window, by version, by time window,
by step and by cohort, each as a chart beside the table of its figures. Below them, the retained
version decisions the API's ``GET /v1/decisions`` lists (``report_read``), with their intervals.
Nothing here computes a figure: the page shapes what the core answered.
"""

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from starlette.responses import Response

from ecp_core.debugger.model import DebuggerQuery, DebuggerReport
from ecp_core.errors import EcpError, FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.wire import structure
from ecp_http.server.console.browser import Visit, signed_in
from ecp_http.server.console.figures import debugger_view, decision_charts, decision_row
from ecp_http.server.problems import STATUS_BY_CODE
from ecp_http.wire.models import ConsoleEconomicsQuery

DEFAULT_DAYS = 30
"""The window a page opens with: the last 30 days, today included."""
DECISIONS_PAGE = 10
"""Decisions a page lists (and charts)."""


def _day(text: str | None, name: str, default: date) -> date:
    """A ``YYYY-MM-DD`` field of the filter, or its default when empty."""
    if not text:
        return default
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ValidationFailed(
            f"the {name} is not a date",
            errors=[FieldError(loc=("query", name), msg="must be a date as YYYY-MM-DD")],
        ) from exc


def window(query: ConsoleEconomicsQuery, today: date) -> tuple[date, date]:
    """The filter's first and last day (both included); 422 when the last comes first."""
    last = _day(query.end, "end", today)
    first = _day(query.start, "start", last - timedelta(days=DEFAULT_DAYS - 1))
    if last < first:
        raise ValidationFailed(
            "the window ends before it starts",
            errors=[FieldError(loc=("query", "end"), msg="must not be before start")],
        )
    return first, last


def debugger_query(query: ConsoleEconomicsQuery, first: date, last: date) -> DebuggerQuery:
    """The debugger's own query for the filter: ``[first 00:00, the day after last 00:00)``."""
    fields: dict[str, Any] = {
        "workflow_id": query.workflow,
        "start": datetime.combine(first, time(), UTC).isoformat(),
        "end": datetime.combine(last + timedelta(days=1), time(), UTC).isoformat(),
    }
    if query.version:
        fields["workflow_version"] = query.version
    if query.granularity:
        fields["granularity"] = query.granularity
    if query.cohort:
        fields["cohort"] = query.cohort
    return structure(fields, DebuggerQuery, what="the filter")


def _figures(visit: Visit, query: ConsoleEconomicsQuery, today: date) -> tuple[dict[str, Any], int]:
    """The debugger's part of the page (or why there is none) and the page's status."""
    if not query.workflow:
        return {"report": None, "problem": None}, 200
    try:
        first, last = window(query, today)
        report: DebuggerReport = visit.services.ecp.debugger.report(
            visit.session.tenant_id, debugger_query(query, first, last)
        )
    except EcpError as error:
        details = [found.msg for found in getattr(error, "errors", ())]
        problem = {"message": str(error), "details": details}
        return {"report": None, "problem": problem}, STATUS_BY_CODE.get(error.code, 400)
    return {"report": debugger_view(report), "problem": None}, 200


def _decisions(visit: Visit, query: ConsoleEconomicsQuery) -> dict[str, Any]:
    """The retained decisions of the workflow (of every workflow without one), newest first."""
    if not visit.may(Permission.REPORT_READ):
        return {"may_read_decisions": False, "decisions": [], "decision_charts": []}
    found, cursor = visit.services.ecp.decisions.history(
        visit.session.tenant_id,
        limit=DECISIONS_PAGE,
        cursor=query.decisions or None,
        workflow_id=query.workflow or None,
    )
    return {
        "may_read_decisions": True,
        "decisions": [decision_row(artifact) for artifact in found],
        "decision_charts": decision_charts(found),
        "decisions_cursor": cursor,
        "decisions_paged": bool(query.decisions),
    }


def _shown_days(query: ConsoleEconomicsQuery, today: date) -> dict[str, str]:
    """The window's days as the form shows them: as typed, or the defaults they stand for."""
    try:
        first, last = window(query, today)
    except ValidationFailed:
        return {"start": query.start or "", "end": query.end or ""}
    return {"start": first.isoformat(), "end": last.isoformat()}


def _economics(visit: Visit) -> Response:
    """Cost and outcomes of a workflow over a window, and the version decisions."""
    visit.actor(Permission.DEBUGGER_READ)
    query: ConsoleEconomicsQuery = visit.call.params or ConsoleEconomicsQuery()
    today = datetime.now(UTC).date()
    figures, status = _figures(visit, query, today)
    shown = {
        "workflow": query.workflow,
        "version": query.version,
        "start": query.start,
        "end": query.end,
        "granularity": query.granularity,
        "cohort": query.cohort,
    }
    return visit.page(
        "console_economics.html",
        status=status,
        section="economics",
        workflow=query.workflow or "",
        version=query.version or "",
        **_shown_days(query, today),
        granularity=query.granularity or "day",
        cohort=query.cohort or "subject_id",
        filter_query={name: value for name, value in shown.items() if value},
        **figures,
        **_decisions(visit, query),
    )


economics = signed_in(_economics)

__all__ = ["DECISIONS_PAGE", "DEFAULT_DAYS", "debugger_query", "economics", "window"]
