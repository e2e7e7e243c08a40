"""Bounded model backtests: request (queued, replayed off the request), read, list.

And the model-migration result of a finished backtest, as JSON or as its PDF report (ADR 0039).
"""

from typing import Annotated

import attrs
from starlette.responses import Response

from ecp_core.backtests.migration import ModelMigration
from ecp_core.backtests.model import BacktestRequest, BacktestStatus
from ecp_core.backtests.responses import BacktestListResponse, BacktestResponse
from ecp_core.constraints import Range, checked
from ecp_core.pages import DEFAULT_PAGE, MAX_PAGE
from ecp_core.permissions import Permission
from ecp_http.server.migration_report import PDF_MEDIA_TYPE, migration_pdf
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services

TAG = "backtests"


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestListQuery:
    """A page of the tenant's backtests, newest first."""

    limit: Annotated[int, Range(1, MAX_PAGE)] = DEFAULT_PAGE
    cursor: str | None = None


def request_backtest(call: Call, services: Services) -> Reply:
    """Queue a backtest (202 with Location); a finished exact retry answers 200, no charge."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    backtest, _ = services.ecp.backtests.request(call.actor, call.body)
    finished = backtest.status is BacktestStatus.FINISHED
    return Reply(
        body=BacktestResponse.of(backtest),
        status=200 if finished else 202,
        headers={} if finished else {"Location": f"/v1/backtests/{backtest.backtest_id}"},
    )


def get_backtest(call: Call, services: Services) -> BacktestResponse:
    """One backtest: status, evidence (numbers only), result, metering, candidate outcomes."""
    return BacktestResponse.of(services.ecp.backtests.get(call.tenant, call.path["backtest_id"]))


def list_backtests(call: Call, services: Services) -> BacktestListResponse:
    """The tenant's backtests, newest first."""
    query: BacktestListQuery = call.params
    found, cursor = services.ecp.backtests.page(call.tenant, limit=query.limit, cursor=query.cursor)
    return BacktestListResponse(
        backtests=tuple(BacktestResponse.of(backtest) for backtest in found), next_cursor=cursor
    )


def get_migration(call: Call, services: Services) -> ModelMigration:
    """The model-migration result of a finished backtest (always abstains, names its gaps)."""
    return services.ecp.backtests.migration(call.tenant, call.path["backtest_id"])


def get_migration_report(call: Call, services: Services) -> Response:
    """The model-migration result as its PDF report (``model-migration-v3``)."""
    migration = services.ecp.backtests.migration(call.tenant, call.path["backtest_id"])
    name = f"{migration.report_format}-{migration.backtest_id}.pdf"
    return Response(
        migration_pdf(migration),
        media_type=PDF_MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/backtests",
        handler=request_backtest,
        operation_id="backtests_request",
        tag=TAG,
        summary="Request a backtest of 5 to 25 labeled cases (202 queued; 200 a finished retry)",
        permission=Permission.BACKTEST_REQUEST,
        body=BacktestRequest,
        response=BacktestResponse,
        status=202,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/backtests/{backtest_id}",
        handler=get_backtest,
        operation_id="backtests_get",
        tag=TAG,
        summary="One backtest: status, per-case evidence, result, metering, candidate outcomes",
        permission=Permission.REPORT_READ,
        response=BacktestResponse,
    ),
    Operation(
        method="GET",
        path="/v1/backtests",
        handler=list_backtests,
        operation_id="backtests_list",
        tag=TAG,
        summary="The tenant's backtests, newest first (each with its candidate outcomes)",
        permission=Permission.REPORT_READ,
        response=BacktestListResponse,
        query=BacktestListQuery,
    ),
    Operation(
        method="GET",
        path="/v1/backtests/{backtest_id}/migration",
        handler=get_migration,
        operation_id="backtests_get_migration",
        tag=TAG,
        summary="The model-migration result of a finished backtest (experimental; abstains)",
        permission=Permission.REPORT_READ,
        response=ModelMigration,
    ),
    Operation(
        method="GET",
        path="/v1/backtests/{backtest_id}/migration.pdf",
        handler=get_migration_report,
        operation_id="backtests_get_migration_pdf",
        tag=TAG,
        summary="The model-migration result as a PDF report (model-migration-v3)",
        permission=Permission.REPORT_READ,
        media_type=PDF_MEDIA_TYPE,
    ),
]
