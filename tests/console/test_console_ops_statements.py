"""The console's task and webhook pages on PostgreSQL: statements do not grow with the rows.

The page handlers are called on the test's own thread so that every statement a page sends is
counted: a page with a row or two sends as many as a full page (no query per row, ADR 0084).
"""

import itertools
import os
from collections.abc import Callable, Iterator
from datetime import timedelta

import attrs
import pytest
from starlette.responses import Response
from starlette.testclient import TestClient
from tests.support.console import console_settings
from tests.support.statements import statements

from ecp_core.identity import ActorIdentity
from ecp_core.system import SystemClock
from ecp_core.testing.conformance.tasks.samples import task
from ecp_core.testing.conformance.webhooks import delivery, subscription
from ecp_core.testing.samples import NOW
from ecp_core.types import AuthMethod, ServiceRole
from ecp_core.webhooks.model import DeliveryStatus
from ecp_http.server.console import tasks, webhooks
from ecp_http.server.console.tasks import TASKS_PAGE, TOPICS_PAGE
from ecp_http.server.console.webhooks import DELIVERIES_PAGE
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleTasksQuery, ConsoleWebhooksQuery
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.integration

TENANT = "console-ops-counted"
_names = itertools.count()


@pytest.fixture
def database(postgres_url, migrated_template) -> Iterator[str]:
    name = f"ecp_console_ops_{os.getpid()}_{next(_names)}"
    yield create_database(postgres_url, name, template=migrated_template)
    drop_database(postgres_url, name)


def _cookie(secret: str) -> str:
    sessions = ConsoleSessions(secret, hours=1, secure=False, clock=SystemClock())
    actor = ActorIdentity(
        subject="counted",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.ADMIN,),
        tenant_id=TENANT,
    )
    response = Response()
    sessions.start(response, actor, key_id=None, until=None)
    return f"{CONSOLE_COOKIE}={response.headers['set-cookie'].split(';')[0].split('=', 1)[1]}"


def _counted(services, handler: Callable, params: object) -> int:
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


@pytest.mark.spec("C15 console-tasks", "C15 console-webhooks")
def test_task_and_webhook_pages_send_as_many_statements_for_a_few_rows_as_for_a_full_page(database):
    app = create_app(console_settings(database_url=database, webhook_poll_seconds=3600))
    with TestClient(app):
        runtime = app.state.runtime
        services = runtime.services
        topic_page = ConsoleTasksQuery(topic="t-00")
        dead_only = ConsoleWebhooksQuery(status="dead")

        def add(first: int, count: int) -> None:
            with runtime.store.unit_of_work() as tx:
                for n in range(first, first + count):
                    made = task(
                        f"task-{n:03}", tenant=TENANT, topic=f"t-{n % (TOPICS_PAGE + 3):02}"
                    )
                    tx.tasks.offer(attrs.evolve(made, created_at=NOW + timedelta(seconds=n)))
                    tx.tasks.offer(task(f"in-topic-{n:03}", tenant=TENANT, topic="t-00"))
                    sub = subscription(f"sub-{n:03}", tenant=TENANT)
                    tx.webhooks.add_subscription(sub)
                    for status in DeliveryStatus:
                        tx.webhooks.add_delivery(
                            delivery(
                                f"del-{n:03}-{status.value}",
                                tenant=TENANT,
                                subscription_id=sub.subscription_id,
                                status=status,
                            )
                        )
                tx.commit()

        add(0, 2)
        pages = [
            (tasks.tasks, ConsoleTasksQuery()),
            (tasks.tasks, topic_page),
            (webhooks.webhooks, ConsoleWebhooksQuery()),
            (webhooks.webhooks, dead_only),
        ]
        for handler, params in pages:  # each connection of the pool set up before counting
            _counted(services, handler, params)
        few = [
            _counted(services, tasks.tasks, ConsoleTasksQuery()),
            _counted(services, tasks.tasks, topic_page),
            _counted(services, webhooks.webhooks, ConsoleWebhooksQuery()),
            _counted(services, webhooks.webhooks, dead_only),
        ]
        add(2, max(TOPICS_PAGE, TASKS_PAGE, DELIVERIES_PAGE) + 5)
        many = [
            _counted(services, tasks.tasks, ConsoleTasksQuery()),
            _counted(services, tasks.tasks, topic_page),
            _counted(services, webhooks.webhooks, ConsoleWebhooksQuery()),
            _counted(services, webhooks.webhooks, dead_only),
        ]
        assert many == few
        assert few[0] == few[1] == 1 and few[2] == few[3] <= 4
