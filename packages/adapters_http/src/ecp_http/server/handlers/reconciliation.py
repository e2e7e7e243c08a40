"""Provider-bill import and reconciliation reports (spec "Provider-bill reconciliation")."""

from starlette.responses import Response

from ecp_core.permissions import Permission
from ecp_core.reconciliation.markdown import render_markdown
from ecp_core.reconciliation.model import (
    ProviderStatement,
    ReconciliationReport,
    StatementImported,
)
from ecp_http.server.handlers.evidence import MARKDOWN
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import ReportFormatQuery

TAG = "reconciliation"


def import_bill(call: Call, services: Services) -> Reply:
    """Import a provider statement (201), or find the identical one imported before (200)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    stored, created = services.ecp.reconciliation.import_statement(call.actor, call.body)
    statement = stored.statement
    answer = StatementImported(
        provider=statement.provider,
        statement_id=statement.statement_id,
        digest=stored.digest,
        imported_at=stored.imported_at,
        buckets=len(statement.buckets),
        billed_total_usd=statement.billed_total_usd,
    )
    return Reply(body=answer, status=201 if created else 200)


def reconciliation_report(call: Call, services: Services) -> ReconciliationReport | Response:
    """A statement reconciled with the measured evidence, as JSON or Markdown."""
    query: ReportFormatQuery = call.params
    found = services.ecp.reconciliation.report(
        call.tenant, call.path["provider"], call.path["statement_id"]
    )
    if query.format == "markdown":
        return Response(render_markdown(found), media_type=f"{MARKDOWN}; charset=utf-8")
    return found


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/reconciliation/provider-bills",
        handler=import_bill,
        operation_id="reconciliation_import_bill",
        tag=TAG,
        summary="Import a provider statement (201; 200 on exact replay; 409 on changed content)",
        permission=Permission.BILL_IMPORT,
        body=ProviderStatement,
        response=StatementImported,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/reconciliation/provider-bills/{provider}/{statement_id}/report",
        handler=reconciliation_report,
        operation_id="reconciliation_report",
        tag=TAG,
        summary="Reconcile a statement with measured execution evidence",
        permission=Permission.REPORT_READ,
        response=ReconciliationReport,
        query=ReportFormatQuery,
        alternate_media=(MARKDOWN,),
    ),
]
