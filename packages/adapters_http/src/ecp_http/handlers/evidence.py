"""Economic evidence ingestion, outcome definitions and the debugger (CONTRACT.md "Evidence")."""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from ecp_core.debugger.markdown import render_markdown
from ecp_core.debugger.model import (
    COHORT_PATTERN,
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
from ecp_core.wire import structure
from ecp_http.routing import Call, Operation, QueryParam, Reply

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

EVIDENCE = "evidence"
DEBUGGER = "debugger"
MARKDOWN = "text/markdown"

WINDOW_QUERY = (
    QueryParam(name="workflow_id", schema={"type": "string", "minLength": 1}, required=True),
    QueryParam(
        name="start",
        schema={"type": "string", "format": "date-time"},
        description="Window start (inclusive).",
        required=True,
    ),
    QueryParam(
        name="end",
        schema={"type": "string", "format": "date-time"},
        description="Window end (exclusive).",
        required=True,
    ),
    QueryParam(name="workflow_version", schema={"type": "string", "minLength": 1}),
    QueryParam(name="granularity", schema={"enum": ["hour", "day"]}),
    QueryParam(
        name="cohort",
        schema={"type": "string", "pattern": f"^(?:{COHORT_PATTERN})$"},
        description="``subject_id`` (default) or ``dimension:<key>``.",
    ),
)
QUERY_FIELDS = ("workflow_id", "start", "end", "workflow_version", "granularity", "cohort")


def debugger_query(query: dict[str, str] | Any) -> DebuggerQuery:  # noqa: ANN401
    """The window a debugger route reads, from its query string (422 naming each bad field)."""
    fields = {name: query[name] for name in QUERY_FIELDS if name in query}
    try:
        found = structure(fields, DebuggerQuery, what="the query")
    except ValidationFailed as exc:
        raise ValidationFailed(
            exc.detail, errors=[FieldError(loc=("query", *e.loc), msg=e.msg) for e in exc.errors]
        ) from None
    if found.end <= found.start:
        raise ValidationFailed(
            "the window is empty",
            errors=[FieldError(loc=("query", "end"), msg="must be after start")],
        )
    return found


def report_format(query: dict[str, str] | Any) -> str:  # noqa: ANN401
    """The ``format`` query parameter: ``json`` (default) or ``markdown``; 422 otherwise."""
    chosen = query.get("format", "json")
    if chosen not in {"json", "markdown"}:
        raise ValidationFailed(
            "invalid format",
            errors=[FieldError(loc=("query", "format"), msg="must be json or markdown")],
        )
    return str(chosen)


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    evidence, debugger = runtime.ecp.evidence, runtime.ecp.debugger

    def ingest(
        store: Callable[[str, Sequence[Any]], IngestResult],
    ) -> Callable[[Call], IngestResult]:
        def handle(call: Call) -> IngestResult:
            return store(call.tenant, call.body.events)

        return handle

    def define_outcome(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        definition, created = evidence.define_outcome(call.actor, call.body)
        return Reply(body=definition, status=201 if created else 200)

    def timeline(call: Call) -> TimelineResponse:
        return debugger.timeline(call.tenant, debugger_query(call.query))

    def cohorts(call: Call) -> CohortsResponse:
        return debugger.cohorts(call.tenant, debugger_query(call.query))

    def breakage(call: Call) -> BreakageResponse:
        return debugger.breakage(call.tenant, debugger_query(call.query))

    def debugger_report(call: Call) -> DebuggerReport | Response:
        chosen = report_format(call.query)
        found = debugger.report(call.tenant, debugger_query(call.query))
        if chosen == "markdown":
            return Response(render_markdown(found), media_type=f"{MARKDOWN}; charset=utf-8")
        return found

    batches: list[tuple[str, str, type, Callable[[str, Sequence[Any]], IngestResult]]] = [
        ("executions", "execution events", ExecutionBatch, evidence.ingest_executions),
        ("outcomes", "outcome assertions", OutcomeBatch, evidence.ingest_outcomes),
        (
            "charge-revisions",
            "charge-cost revisions",
            ChargeRevisionBatch,
            evidence.ingest_revisions,
        ),
        (
            "source-inventories",
            "source inventories",
            SourceInventoryBatch,
            evidence.ingest_inventories,
        ),
    ]
    ingestion = []
    for path, what, body, store in batches:
        handler = ingest(store)
        handler.__name__ = "ingest_" + path.replace("-", "_")
        ingestion.append(
            Operation(
                method="POST",
                path=f"/v1/evidence/{path}",
                handler=handler,
                tag=EVIDENCE,
                summary=f"Ingest a batch of up to 1,000 {what}, idempotent per event id",
                permission=Permission.EVIDENCE_INGEST,
                body=body,
                response=IngestResult,
                bulk=True,
            )
        )
    read = Permission.DEBUGGER_READ
    return [
        *ingestion,
        Operation(
            method="POST",
            path="/v1/debugger/outcome-definitions",
            handler=define_outcome,
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
            tag=DEBUGGER,
            summary="Cost, successful outcomes and failure tax by workflow version and time window",
            permission=read,
            response=TimelineResponse,
            query=WINDOW_QUERY,
        ),
        Operation(
            method="GET",
            path="/v1/debugger/cohorts",
            handler=cohorts,
            tag=DEBUGGER,
            summary="Cost per successful outcome and failure rate by subject_id or a dimension",
            permission=read,
            response=CohortsResponse,
            query=WINDOW_QUERY,
        ),
        Operation(
            method="GET",
            path="/v1/debugger/breakage",
            handler=breakage,
            tag=DEBUGGER,
            summary="Versions and steps with the most failed-run exposure and repeated spend",
            permission=read,
            response=BreakageResponse,
            query=WINDOW_QUERY,
        ),
        Operation(
            method="GET",
            path="/v1/debugger/report",
            handler=debugger_report,
            tag=DEBUGGER,
            summary="Timeline, cohorts and breakage combined, as JSON or Markdown",
            permission=read,
            response=DebuggerReport,
            query=(*WINDOW_QUERY, QueryParam(name="format", schema={"enum": ["json", "markdown"]})),
            alternate_media=(MARKDOWN,),
        ),
    ]
