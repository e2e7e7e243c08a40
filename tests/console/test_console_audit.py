"""The console's audit page over HTTP on the memory store: verify, roles, tenants, CSRF.

A verification answers what the API's verify routes answer; a record altered in the store makes
it fail at that record; the tenant's transparency log shows its signed checkpoint and key.
"""

from collections.abc import Iterator

import attrs
import pytest
from starlette.testclient import TestClient
from tests.support.console import (
    api_key,
    bearer,
    console_settings,
    deployed,
    field,
    signed_in,
    waiting_run,
)

from ecp_core.memory import MemoryStore
from ecp_http.server.console.browser import CONSOLE_CSP
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

TENANT = "console-audit"
ADMIN = bearer(TENANT, "admin")
AUDIT = "C15 console-audit"
VERIFY = "/console/audit/verify"


@attrs.frozen
class Served:
    client: TestClient
    store: MemoryStore


@pytest.fixture
def served() -> Iterator[Served]:
    store = MemoryStore()
    with TestClient(create_app(console_settings(), storage=store)) as client:
        yield Served(client, store)


def viewer(client: TestClient, admin: dict[str, str] = ADMIN):
    return signed_in(client, api_key(client, admin, "viewer")[0])


def verify(person, **fields: str):
    page = person.get("/console/audit").text
    return person.post(VERIFY, {"csrf_token": field(page, "csrf_token", VERIFY), **fields})


@pytest.mark.spec(AUDIT)
def test_a_deployment_and_a_run_verify_as_the_api_says(served):
    client = served.client
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    person = viewer(client)
    page = person.get("/console/audit")
    assert page.status_code == 200
    assert '<code class="strong">pay</code>' in page.text and "Verify pay" in page.text
    assert "Transparency log" in page.text and "Verifier key: <code>" in page.text
    assert "<dt>Records</dt>" in page.text
    api = client.get("/deployments/pay/audits/verify", headers=ADMIN).json()
    answer = verify(person, deployment="pay")
    assert answer.status_code == 200, answer.text
    assert api["verified"] is True and "every digest recomputes and links" in answer.text
    assert f"<dd>{api['record_count']}" in answer.text
    assert api["signing_key_id"] and api["signing_key_id"] in answer.text
    assert 'badge status-resolved">verified' in answer.text
    run = verify(person, run_id=run_id)
    assert run.status_code == 200 and f"Run <code>{run_id}</code>" in run.text


@pytest.mark.spec(AUDIT)
def test_a_record_changed_in_the_store_fails_at_that_record(served):
    client = served.client
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    records = served.store.tables.table("audit")
    audit_id = served.store.tables.table("audit_chains")[run_id][0]
    records[audit_id] = attrs.evolve(records[audit_id], node_id="forged")
    person = viewer(client)
    answer = verify(person, deployment="pay")
    assert answer.status_code == 200
    assert "verification failed" in answer.text and "broken" in answer.text
    assert f"<code>{audit_id}</code>" in answer.text  # the first failing record
    assert "forged" not in answer.text  # a record's content never reaches the page


@pytest.mark.spec(AUDIT)
def test_verify_needs_one_thing_and_unknown_ones_are_404(served):
    person = viewer(served.client)
    assert verify(person).status_code == 422
    assert verify(person, deployment="a", run_id="b").status_code == 422
    assert verify(person, deployment="nope").status_code == 404
    assert verify(person, run_id="nope").status_code == 404


@pytest.mark.spec(AUDIT)
def test_another_tenants_deployment_and_run_are_404_and_never_listed(served):
    client = served.client
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    other = viewer(client, bearer("console-audit-other", "admin"))
    assert "No deployments yet" in other.get("/console/audit").text
    assert verify(other, deployment="pay").status_code == 404
    assert verify(other, run_id=run_id).status_code == 404


@pytest.mark.spec(AUDIT, "C15 console-csrf")
def test_a_verify_post_without_this_sessions_token_is_403(served):
    client = served.client
    deployed(client, ADMIN, "pay")
    person, stranger = viewer(client), viewer(client)
    assert person.post(VERIFY, {"deployment": "pay"}).status_code == 403
    token = field(stranger.get("/console/audit").text, "csrf_token", VERIFY)
    assert person.post(VERIFY, {"csrf_token": token, "deployment": "pay"}).status_code == 403


@pytest.mark.spec(AUDIT, "C15 console-roles")
def test_viewers_see_audit_analysts_do_not(served):
    client = served.client
    analyst = signed_in(client, api_key(client, ADMIN, "analyst")[0])
    assert analyst.get("/console/audit").status_code == 403
    assert verify_forged(analyst) == 403
    assert 'href="/console/audit"' not in analyst.get("/console/economics").text
    assert 'href="/console/audit"' in viewer(client).get("/console/audit").text


def verify_forged(person) -> int:
    """A verify post with the person's own sign-out token (a valid token of another form)."""
    page = person.get("/console/economics").text
    token = field(page, "csrf_token", "/console/sign-out")
    return person.post(VERIFY, {"csrf_token": token, "deployment": "pay"}).status_code


@pytest.mark.spec(AUDIT)
def test_deployments_page_by_keyset(served):
    client = served.client
    for index in range(27):
        deployed(client, ADMIN, f"d{index:02d}")
    person = viewer(client)
    first = person.get("/console/audit").text
    assert first.count("Verify d") == 25
    second = person.get("/console/audit", cursor=first.split("cursor=")[1].split('"')[0]).text
    assert second.count("Verify d") == 2 and "First page" in second


@pytest.mark.spec(AUDIT, "C15 console-csp")
def test_the_pages_carry_the_console_policy_and_a_bad_cursor_is_a_4xx_page(served):
    person = viewer(served.client)
    page = person.get("/console/audit")
    assert page.headers["content-security-policy"] == CONSOLE_CSP
    assert page.headers["cache-control"] == "no-store"
    for cursor in ("nope", "%00", "x" * 5000):
        answer = person.get("/console/audit", cursor=cursor)
        assert 400 <= answer.status_code < 500, (cursor, answer.status_code)
        assert answer.headers["content-security-policy"] == CONSOLE_CSP
