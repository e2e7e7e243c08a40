"""The run list and the run page on PostgreSQL: the statements a page sends do not grow with its
rows (the handlers called on the test's own thread, so that every statement is counted)."""

import pytest
from starlette.testclient import TestClient
from tests.support.console import (
    WAIT,
    bearer,
    console_settings,
    deployed,
    page_statements,
    sealed_session,
    waiting_run,
)

from ecp_core.types import ServiceRole
from ecp_http.server.console import runs
from ecp_http.server.console.run_views import RUNS_PAGE
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleRunsQuery

pytestmark = pytest.mark.integration

TENANT = "console-run-statements"
ADMIN = bearer(TENANT, "admin")


@pytest.mark.spec("C15 console-runs", "C15 console-run")
def test_a_page_sends_the_same_statements_for_a_few_runs_as_for_a_full_page(fresh_database):
    app = create_app(console_settings(database_url=fresh_database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        deployed(client, ADMIN, "count")
        ids = [waiting_run(client, ADMIN, "count")[0] for _ in range(2)]
        few, status = page_statements(services, runs.runs_page, TENANT, ConsoleRunsQuery())
        assert status == 200
        filtered = ConsoleRunsQuery(deployment="count", status="waiting_approval", find=ids[0])
        few_filtered, _ = page_statements(services, runs.runs_page, TENANT, filtered)
        page, status = page_statements(services, runs.run_page, TENANT, run_id=ids[0])
        assert status == 200
        ids += [waiting_run(client, ADMIN, "count")[0] for _ in range(RUNS_PAGE + 3)]
        client.post(
            f"/runs/{ids[-1]}/cancel", json={"reason": "counted"}, headers={**ADMIN, **WAIT}
        )
        many, _ = page_statements(services, runs.runs_page, TENANT, ConsoleRunsQuery())
        assert many == few == few_filtered <= 2  # the page's read, nothing per row
        again, _ = page_statements(services, runs.run_page, TENANT, run_id=ids[-1])
        assert again == page <= 10


@pytest.mark.spec("C15 console-runs", "C15 console-csp")
def test_no_filter_is_a_5xx_on_postgresql(fresh_database):
    app = create_app(console_settings(database_url=fresh_database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        for query in (
            ConsoleRunsQuery(find="x" * 512),
            ConsoleRunsQuery(status="failed", deployment="é" * 300),
        ):
            _, status = page_statements(services, runs.runs_page, TENANT, query)
            assert status == 200, query
        cookie = sealed_session(services.settings.jwt_secret, TENANT, ServiceRole.ADMIN)
        for params in (
            {"find": "a\x00b"},
            {"deployment": "\x00"},
            {"find": "x" * 513},
            {"unknown": "field"},
        ):
            answer = client.get("/console/runs", params=params, headers={"cookie": cookie})
            assert answer.status_code == 422, params
        for path in ("/console/runs/a%00b", "/console/runs/a%00b/verify"):
            answer = client.get(path, headers={"cookie": cookie})
            assert 400 <= answer.status_code < 500, path
