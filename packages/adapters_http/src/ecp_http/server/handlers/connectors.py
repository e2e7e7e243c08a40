"""Connectors: create, list, read, update, delete; a cost-capped test; a test cost scope's ledger.

Reads need ``connector_read``, writes ``connector_admin``, tests ``connector_test`` (ADR 0044).
Settings-defined connectors are listed with ``source: "env"`` and cannot be changed here.
"""

from typing import Annotated

import attrs

from ecp_core.connectors.model import (
    ConnectorCostReport,
    ConnectorCreateRequest,
    ConnectorListResponse,
    ConnectorSummaryResponse,
    ConnectorTestRequest,
    ConnectorTestResponse,
    ConnectorUpdateRequest,
    TestId,
)
from ecp_core.constraints import Range, checked
from ecp_core.pages import DEFAULT_PAGE, MAX_PAGE
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.query import described

TAG = "connectors"


@described(limit="Page size, 1 to 500.", cursor="The next_cursor of the previous page.")
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorListQuery:
    """A page of the connectors the tenant sees, by ref."""

    limit: Annotated[int, Range(1, MAX_PAGE)] = DEFAULT_PAGE
    cursor: str | None = None


@described(
    campaign_id="The tests' campaign.",
    run_id="The tests' run; leave out for the campaign's tests without one.",
    limit="Ledger entries per page, 1 to 500.",
    cursor="The next_cursor of the previous page.",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorCostQuery:
    """One test cost scope: (campaign, run) of the caller's tenant."""

    campaign_id: TestId
    run_id: TestId | None = None
    limit: Annotated[int, Range(1, MAX_PAGE)] = DEFAULT_PAGE
    cursor: str | None = None


def create_connector(call: Call, services: Services) -> Reply:
    """Store a connector of the caller's tenant (201 with Location)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    created = services.ecp.connectors.create(call.actor, call.body)
    return Reply(body=created, status=201, headers={"Location": f"/v1/connectors/{created.ref}"})


def list_connectors(call: Call, services: Services) -> ConnectorListResponse:
    """The settings-defined connectors and the tenant's own, by ref."""
    query: ConnectorListQuery = call.params
    return services.ecp.connectors.page(call.tenant, limit=query.limit, cursor=query.cursor)


def get_connector(call: Call, services: Services) -> ConnectorSummaryResponse:
    """One connector the tenant sees."""
    return services.ecp.connectors.get(call.tenant, call.path["ref"])


def update_connector(call: Call, services: Services) -> ConnectorSummaryResponse:
    """Replace a stored connector's backend type and params."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.connectors.update(call.actor, call.path["ref"], call.body)


def delete_connector(call: Call, services: Services) -> Reply:
    """Delete a stored connector (its tests' ledger stays)."""
    services.ecp.connectors.delete(call.tenant, call.path["ref"])
    return Reply(body=None, status=204)


def test_connector(call: Call, services: Services) -> ConnectorTestResponse:
    """Test a connector once under its cost caps: always 200, ``ok`` false says why."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    result = services.ecp.connector_tests.test(call.actor, call.path["ref"], call.body)
    if services.metrics is not None:
        services.metrics.connector_tests.labels(result.outcome.value).inc()
    return result.response


def get_connector_costs(call: Call, services: Services) -> ConnectorCostReport:
    """A test cost scope's committed and reserved totals and its ledger, oldest first."""
    query: ConnectorCostQuery = call.params
    return services.ecp.connectors.costs(
        call.tenant, query.campaign_id, query.run_id, limit=query.limit, cursor=query.cursor
    )


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/connectors",
        handler=create_connector,
        operation_id="connectors_create",
        tag=TAG,
        summary="Store a connector (params hold secret names, never secret values)",
        permission=Permission.CONNECTOR_ADMIN,
        body=ConnectorCreateRequest,
        response=ConnectorSummaryResponse,
        status=201,
    ),
    Operation(
        method="GET",
        path="/v1/connectors",
        handler=list_connectors,
        operation_id="connectors_list",
        tag=TAG,
        summary="The connectors the tenant sees: settings-defined (env) and stored (api), by ref",
        permission=Permission.CONNECTOR_READ,
        response=ConnectorListResponse,
        query=ConnectorListQuery,
    ),
    Operation(
        method="GET",
        path="/v1/connectors/{ref}",
        handler=get_connector,
        operation_id="connectors_get",
        tag=TAG,
        summary="One connector",
        permission=Permission.CONNECTOR_READ,
        response=ConnectorSummaryResponse,
    ),
    Operation(
        method="PUT",
        path="/v1/connectors/{ref}",
        handler=update_connector,
        operation_id="connectors_update",
        tag=TAG,
        summary="Replace a stored connector's backend type and params (not a settings-defined one)",
        permission=Permission.CONNECTOR_ADMIN,
        body=ConnectorUpdateRequest,
        response=ConnectorSummaryResponse,
    ),
    Operation(
        method="DELETE",
        path="/v1/connectors/{ref}",
        handler=delete_connector,
        operation_id="connectors_delete",
        tag=TAG,
        summary="Delete a stored connector (not a settings-defined one)",
        permission=Permission.CONNECTOR_ADMIN,
        status=204,
    ),
    Operation(
        method="POST",
        path="/v1/connectors/{ref}/test",
        handler=test_connector,
        operation_id="connectors_test",
        tag=TAG,
        summary="Test a connector once: reserve the worst case under max_cost_usd and run_cap_usd,"
        " call, commit the measured cost, release the rest (always 200; ok false says why)",
        permission=Permission.CONNECTOR_TEST,
        body=ConnectorTestRequest,
        response=ConnectorTestResponse,
    ),
    Operation(
        method="GET",
        path="/v1/connector-costs",
        handler=get_connector_costs,
        operation_id="connectors_get_costs",
        tag=TAG,
        summary="A connector test cost scope (campaign, run): committed, reserved and the ledger",
        permission=Permission.CONNECTOR_READ,
        response=ConnectorCostReport,
        query=ConnectorCostQuery,
    ),
]
