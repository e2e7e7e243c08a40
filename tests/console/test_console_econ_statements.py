"""The economics and audit pages on PostgreSQL: their statements do not grow with their rows.

The page handlers are called on the test's own thread so that every statement they send is
counted (:mod:`tests.support.statements`): a page with a few rows and a page with a full page of
rows send the same number.
"""

import itertools

import pytest
from starlette.testclient import TestClient
from tests.support.console import bearer, console_settings, deployed, page_statements
from tests.support.economics import seed

from ecp_http.server.console import audit, economics
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleAuditQuery, ConsoleEconomicsQuery

pytestmark = pytest.mark.integration

TENANT = "console-econ-count"
ADMIN = bearer(TENANT, "admin")
_names = itertools.count()


def _counted(services: object, handler: object, params: object) -> int:
    """The statements a page sends (it must answer 200)."""
    count, status = page_statements(services, handler, TENANT, params)
    assert status == 200
    return count


def _compare(client: TestClient, workflow: str, growth: int) -> None:
    body = {
        "workflow_id": workflow,
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": "2020-01-01T00:00:00Z",
        "end": "2100-01-01T00:00:00Z",
        "policy": {"min_success_rate": 0.5, "max_cost_growth": growth / 10},
    }
    assert client.post("/v1/decisions/compare", json=body, headers=ADMIN).status_code == 201


@pytest.mark.spec("C15 console-economics", "C15 console-audit")
def test_the_pages_send_the_same_statements_for_a_few_rows_as_for_a_full_page(fresh_database):
    app = create_app(console_settings(database_url=fresh_database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        seed(client, ADMIN, workflow="few")
        few = _counted(services, economics.economics, ConsoleEconomicsQuery(workflow="few"))
        seed(client, ADMIN, workflow="many")
        for growth in range(economics.DECISIONS_PAGE + 2):
            _compare(client, "many", growth)
        many = _counted(services, economics.economics, ConsoleEconomicsQuery(workflow="many"))
        assert many == few <= 8  # the debugger's window, the decisions' page: nothing per row

        deployed(client, ADMIN, "one")
        one = _counted(services, audit.audit_page, ConsoleAuditQuery())
        for index in range(audit.DEPLOYMENTS_PAGE + 2):
            deployed(client, ADMIN, f"d{index:02d}")
        full = _counted(services, audit.audit_page, ConsoleAuditQuery())
        assert full == one <= 2
