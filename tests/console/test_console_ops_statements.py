"""The console's task and webhook pages on PostgreSQL: statements do not grow with the rows.

The page handlers are called on the test's own thread so that every statement a page sends is
counted: a page with a row or two sends as many as a full page (no query per row, ADR 0084).
"""

import itertools
from datetime import timedelta

import attrs
import pytest
from starlette.testclient import TestClient
from tests.support.console import console_settings, page_statements

from ecp_core.testing.conformance.tasks.samples import task
from ecp_core.testing.conformance.webhooks import delivery, subscription
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.model import DeliveryStatus
from ecp_http.server.console import tasks, webhooks
from ecp_http.server.console.tasks import TASKS_PAGE, TOPICS_PAGE
from ecp_http.server.console.webhooks import DELIVERIES_PAGE
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleTasksQuery, ConsoleWebhooksQuery

pytestmark = pytest.mark.integration

TENANT = "console-ops-counted"
_names = itertools.count()


def _counted(services: object, handler: object, params: object) -> int:
    """The statements a page sends (it must answer 200)."""
    count, status = page_statements(services, handler, TENANT, params)
    assert status == 200
    return count


@pytest.mark.spec("C15 console-tasks", "C15 console-webhooks")
def test_task_and_webhook_pages_send_as_many_statements_for_a_few_rows_as_for_a_full_page(
    fresh_database,
):
    app = create_app(console_settings(database_url=fresh_database, webhook_poll_seconds=3600))
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
