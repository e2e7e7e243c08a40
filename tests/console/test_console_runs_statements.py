"""The run list and the run page on PostgreSQL: the statements a page sends do not grow with its
rows (the handlers called on the test's own thread, so that every statement is counted)."""

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.responses import Response
from starlette.testclient import TestClient
from tests.support.console import WAIT, bearer, console_settings, deployed, waiting_run
from tests.support.statements import statements

from ecp_core.identity import ActorIdentity
from ecp_core.system import SystemClock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.console import runs
from ecp_http.server.console.run_views import RUNS_PAGE
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleRunsQuery
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.integration

TENANT = "console-run-statements"
ADMIN = bearer(TENANT, "admin")
_names = itertools.count()


@pytest.fixture
def database(postgres_url, migrated_template) -> Iterator[str]:
    name = f"ecp_console_runs_{os.getpid()}_{next(_names)}"
    yield create_database(postgres_url, name, template=migrated_template)
    drop_database(postgres_url, name)


def _session_cookie(secret: str) -> str:
    """A console session of an admin of TENANT (every part of the run page shows)."""
    sessions = ConsoleSessions(secret, hours=1, secure=False, clock=SystemClock())
    actor = ActorIdentity(
        subject="counted",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.ADMIN,),
        tenant_id=TENANT,
    )
    response = Response()
    sessions.start(response, actor, key_id=None, until=None)
    value = response.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    return f"{CONSOLE_COOKIE}={value}"


def _counted(services: Any, handler: Any, params: Any = None, **path: str) -> tuple[int, int]:
    """The statements a page sends, and its status, called on this thread."""
    call = Call(
        actor=None,
        path=path,
        params=params or ConsoleRunsQuery(),
        headers={"cookie": _session_cookie(services.settings.jwt_secret)},
    )
    with statements() as seen:
        answer = handler(call, services)
    return len([s for s in seen if s != "COMMIT"]), answer.status_code


@pytest.mark.spec("C15 console-runs", "C15 console-run")
def test_a_page_sends_the_same_statements_for_a_few_runs_as_for_a_full_page(database):
    app = create_app(console_settings(database_url=database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        deployed(client, ADMIN, "count")
        ids = [waiting_run(client, ADMIN, "count")[0] for _ in range(2)]
        few, status = _counted(services, runs.runs_page)
        assert status == 200
        filtered = ConsoleRunsQuery(deployment="count", status="waiting_approval", find=ids[0])
        few_filtered, _ = _counted(services, runs.runs_page, filtered)
        page, status = _counted(services, runs.run_page, run_id=ids[0])
        assert status == 200
        ids += [waiting_run(client, ADMIN, "count")[0] for _ in range(RUNS_PAGE + 3)]
        client.post(
            f"/runs/{ids[-1]}/cancel", json={"reason": "counted"}, headers={**ADMIN, **WAIT}
        )
        many, _ = _counted(services, runs.runs_page)
        assert many == few == few_filtered <= 2  # the page's read, nothing per row
        again, _ = _counted(services, runs.run_page, run_id=ids[-1])
        assert again == page <= 10


@pytest.mark.spec("C15 console-runs", "C15 console-csp")
def test_no_filter_is_a_5xx_on_postgresql(database):
    app = create_app(console_settings(database_url=database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        for query in (
            ConsoleRunsQuery(find="x" * 512),
            ConsoleRunsQuery(status="failed", deployment="é" * 300),
        ):
            _, status = _counted(services, runs.runs_page, query)
            assert status == 200, query
        cookie = _session_cookie(services.settings.jwt_secret)
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
