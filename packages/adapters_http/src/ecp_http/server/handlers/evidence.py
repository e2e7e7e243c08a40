"""Economic evidence ingestion, outcome definitions and the debugger."""

from collections.abc import Callable

from starlette.responses import Response

from ecp_core.debugger.markdown import render_markdown
from ecp_core.debugger.model import (
    BreakageResponse,
    CohortsResponse,
    DebuggerQuery,
    DebuggerReport,
    TimelineResponse,
)
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.evidence.model import (
    ChargeRevisionBatch,
    ExecutionBatch,
    IngestResult,
    OutcomeBatch,
    OutcomeDefinition,
    OutcomeDefinitionRequest,
    SourceInventoryBatch,
)
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import DebuggerReportQuery

EVIDENCE = "evidence"
DEBUGGER = "debugger"
MARKDOWN = "text/markdown"


def window(call: Call) -> DebuggerQuery:
    """The debugger window the query names; 422 when it is empty."""
    found: DebuggerQuery = call.params
    if found.end <= found.start:
        raise ValidationFailed(
            "the window is empty",
            errors=[FieldError(loc=("query", "end"), msg="must be after start")],
        )
    return found


def ingest_executions(call: Call, services: Services) -> IngestResult:
    """Store a batch of execution events, read from the body's bytes in one pass (ADR 0060)."""
    return services.ecp.evidence.ingest_execution_json(call.tenant, call.raw or b"")


def ingest_outcomes(call: Call, services: Services) -> IngestResult:
    """Store a batch of outcome assertions."""
    return services.ecp.evidence.ingest_outcomes(call.tenant, call.body.events)


def ingest_charge_revisions(call: Call, services: Services) -> IngestResult:
    """Store a batch of charge-cost revisions."""
    return services.ecp.evidence.ingest_revisions(call.tenant, call.body.events)


def ingest_source_inventories(call: Call, services: Services) -> IngestResult:
    """Store a batch of source inventories."""
    return services.ecp.evidence.ingest_inventories(call.tenant, call.body.events)


def define_outcome(call: Call, services: Services) -> Reply:
    """Create an outcome definition (201), or find the identical one (200)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    definition, created = services.ecp.evidence.define_outcome(call.actor, call.body)
    return Reply(body=definition, status=201 if created else 200)


def timeline(call: Call, services: Services) -> TimelineResponse:
    """Cost, outcomes and failure tax over the window."""
    return services.ecp.debugger.timeline(call.tenant, window(call))


def cohorts(call: Call, services: Services) -> CohortsResponse:
    """Cost per successful outcome by cohort."""
    return services.ecp.debugger.cohorts(call.tenant, window(call))


def breakage(call: Call, services: Services) -> BreakageResponse:
    """Where failed runs spent the most."""
    return services.ecp.debugger.breakage(call.tenant, window(call))


def debugger_report(call: Call, services: Services) -> DebuggerReport | Response:
    """The three reads combined, as JSON or Markdown."""
    query: DebuggerReportQuery = call.params
    found = services.ecp.debugger.report(call.tenant, window(call))
    if query.format == "markdown":
        return Response(render_markdown(found), media_type=f"{MARKDOWN}; charset=utf-8")
    return found


def _ingestion(
    handler: Callable[[Call, Services], IngestResult],
    path: str,
    what: str,
    body: type,
    *,
    raw_body: bool = False,
) -> Operation:
    """The operation that takes one kind of evidence batch (``raw_body``: the handler reads it)."""
    return Operation(
        method="POST",
        path=f"/v1/evidence/{path}",
        handler=handler,
        operation_id=f"evidence_ingest_{path.replace('-', '_')}",
        tag=EVIDENCE,
        summary=f"Ingest a batch of up to 1,000 {what}, idempotent per event id",
        permission=Permission.EVIDENCE_INGEST,
        body=body,
        response=IngestResult,
        bulk=True,
        raw_body=raw_body,
    )


OPERATIONS = [
    _ingestion(ingest_executions, "executions", "execution events", ExecutionBatch, raw_body=True),
    _ingestion(ingest_outcomes, "outcomes", "outcome assertions", OutcomeBatch),
    _ingestion(
        ingest_charge_revisions, "charge-revisions", "charge-cost revisions", ChargeRevisionBatch
    ),
    _ingestion(
        ingest_source_inventories, "source-inventories", "source inventories", SourceInventoryBatch
    ),
    Operation(
        method="POST",
        path="/v1/debugger/outcome-definitions",
        handler=define_outcome,
        operation_id="debugger_define_outcome",
        tag=DEBUGGER,
        summary="Create the immutable success contract of a workflow version (200 on replay)",
        permission=Permission.OUTCOME_DEFINE,
        body=OutcomeDefinitionRequest,
        response=OutcomeDefinition,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/debugger/timeline",
        handler=timeline,
        operation_id="debugger_timeline",
        tag=DEBUGGER,
        summary="Cost, successful outcomes and failure tax by workflow version and time window",
        permission=Permission.DEBUGGER_READ,
        response=TimelineResponse,
        query=DebuggerQuery,
    ),
    Operation(
        method="GET",
        path="/v1/debugger/cohorts",
        handler=cohorts,
        operation_id="debugger_cohorts",
        tag=DEBUGGER,
        summary="Cost per successful outcome and failure rate by subject_id or a dimension",
        permission=Permission.DEBUGGER_READ,
        response=CohortsResponse,
        query=DebuggerQuery,
    ),
    Operation(
        method="GET",
        path="/v1/debugger/breakage",
        handler=breakage,
        operation_id="debugger_breakage",
        tag=DEBUGGER,
        summary="Versions and steps with the most failed-run exposure and repeated spend",
        permission=Permission.DEBUGGER_READ,
        response=BreakageResponse,
        query=DebuggerQuery,
    ),
    Operation(
        method="GET",
        path="/v1/debugger/report",
        handler=debugger_report,
        operation_id="debugger_report",
        tag=DEBUGGER,
        summary="Timeline, cohorts and breakage combined, as JSON or Markdown",
        permission=Permission.DEBUGGER_READ,
        response=DebuggerReport,
        query=DebuggerReportQuery,
        alternate_media=(MARKDOWN,),
    ),
]
