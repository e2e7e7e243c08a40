"""The console inbox: what it lists, in which order, its filter, its pages and their statements.

On the memory store through the app's routes, and on PostgreSQL with the page handlers called on
the test's own thread so that every statement a page sends is counted (no query per row).
"""

import itertools
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.support.console import (
    api_key,
    bearer,
    console_client,
    console_settings,
    deployed,
    page_statements,
    signed_in,
    waiting_run,
)

from ecp_core.types import ServiceRole
from ecp_http.server.console import approvals
from ecp_http.server.console.views import INBOX_PAGE
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleInboxQuery

pytestmark = pytest.mark.integration

TENANT = "console-inbox"
ADMIN = bearer(TENANT, "admin")
INBOX = "C15 console-inbox"
_names = itertools.count()


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


def listed(html: str) -> list[str]:
    """The approval ids an inbox page links to, in order."""
    return re.findall(r'href="/console/approvals/([^"]+)"', html)


@pytest.mark.spec(INBOX)
def test_the_inbox_lists_the_soonest_sla_first_and_filters_by_deployment(client):
    deployed(client, ADMIN, "later", sla_seconds=3600)
    deployed(client, ADMIN, "sooner", sla_seconds=600)
    deployed(client, ADMIN, "never")
    deployed(client, ADMIN, "named", approver_subjects=["someone-else"])
    _, never = waiting_run(client, ADMIN, "never")
    _, later = waiting_run(client, ADMIN, "later")
    _, sooner = waiting_run(client, ADMIN, "sooner")
    _, named = waiting_run(client, ADMIN, "named")
    person = signed_in(client, api_key(client, ADMIN, "approver")[0])
    page = person.get("/console/inbox").text
    assert listed(page) == [sooner, later, never]  # not the one naming someone else
    assert re.search(r"due in (9|10) min", page) and re.search(r"due in (59 min|1 h 0 min)", page)
    assert "no SLA" in page
    assert listed(person.get("/console/inbox", deployment="later").text) == [later]
    assert listed(person.get("/console/inbox", deployment="").text) == [sooner, later, never]
    assert "Nothing waits for you" in person.get("/console/inbox", deployment="nope").text
    assert named not in page


@pytest.mark.spec(INBOX)
def test_the_inbox_pages_by_keyset_soonest_sla_first_and_keeps_the_filter(client):
    deployed(client, ADMIN, "bulk")
    deployed(client, ADMIN, "urgent", sla_seconds=600)
    made = [waiting_run(client, ADMIN, "bulk")[1] for _ in range(INBOX_PAGE + 1)]
    _, urgent = waiting_run(client, ADMIN, "urgent")  # the newest, yet first: its SLA runs out
    person = signed_in(client, api_key(client, ADMIN, "approver")[0])

    def pages(**query: str) -> list[list[str]]:
        found, page = [], person.get("/console/inbox", **query).text
        while True:
            found.append(listed(page))
            links = re.findall(r'href="(/console/inbox\?[^"]*cursor=[^"]+)"', page)
            if not links:
                return found
            if "deployment" in query:
                assert f"deployment={query['deployment']}" in links[0]
            page = person.get(links[0].replace("&amp;", "&")).text
            assert "First page" in page

    assert pages() == [[urgent, *made[: INBOX_PAGE - 1]], made[INBOX_PAGE - 1 :]]
    assert pages(deployment="bulk") == [made[:INBOX_PAGE], made[INBOX_PAGE:]]


def _counted(services: object, handler: object, **path: str) -> tuple[int, int]:
    """The statements a page sends, and its status (an approver of TENANT asks)."""
    return page_statements(
        services, handler, TENANT, ConsoleInboxQuery(), role=ServiceRole.APPROVER, **path
    )


@pytest.mark.spec(INBOX)
def test_a_page_sends_the_same_statements_for_a_few_approvals_as_for_a_full_page(fresh_database):
    app = create_app(console_settings(database_url=fresh_database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        deployed(client, ADMIN, "count", sla_seconds=600)
        ids = [waiting_run(client, ADMIN, "count")[1] for _ in range(2)]
        few, status = _counted(services, approvals.inbox)
        assert status == 200
        page, _ = _counted(services, approvals.approval_page, approval_id=ids[0])
        ids += [waiting_run(client, ADMIN, "count")[1] for _ in range(INBOX_PAGE + 3)]
        many, _ = _counted(services, approvals.inbox)
        assert many == few <= 2  # the page's read, nothing per row
        again, _ = _counted(services, approvals.approval_page, approval_id=ids[-1])
        assert again == page <= 6
