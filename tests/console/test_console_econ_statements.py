"""The economics and audit pages on PostgreSQL: their statements do not grow with their rows.

The page handlers are called on the test's own thread so that every statement they send is
counted (:mod:`tests.support.statements`): a page with a few rows and a page with a full page of
rows send the same number.
"""

import itertools
import os
from collections.abc import Iterator

import pytest
from starlette.responses import Response
from starlette.testclient import TestClient
from tests.support.console import bearer, console_settings, deployed
from tests.support.economics import seed
from tests.support.statements import statements

from ecp_core.identity import ActorIdentity
from ecp_core.system import SystemClock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.console import audit, economics
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleAuditQuery, ConsoleEconomicsQuery
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.integration

TENANT = "console-econ-count"
ADMIN = bearer(TENANT, "admin")
_names = itertools.count()


@pytest.fixture
def database(postgres_url, migrated_template) -> Iterator[str]:
    name = f"ecp_console_econ_{os.getpid()}_{next(_names)}"
    yield create_database(postgres_url, name, template=migrated_template)
    drop_database(postgres_url, name)


def _cookie(secret: str) -> str:
    """A console session of an admin of TENANT, sealed as the server seals one."""
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


def _counted(services, handler, params) -> int:
    """The statements a page sends, called on this thread (its status must be 200)."""
    call = Call(
        actor=None,
        path={},
        params=params,
        headers={"cookie": _cookie(services.settings.jwt_secret)},
    )
    with statements() as seen:
        answer = handler(call, services)
    assert answer.status_code == 200, answer.body
    return len([s for s in seen if s != "COMMIT"])


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
def test_the_pages_send_the_same_statements_for_a_few_rows_as_for_a_full_page(database):
    app = create_app(console_settings(database_url=database))
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
