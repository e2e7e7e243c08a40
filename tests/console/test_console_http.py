"""The console over HTTP on the memory store: sign-in, sessions, CSRF, the policy, roles, tenants.

The whole journey in a real browser is ``tests/console/test_console_browser.py``; here each rule
alone, through the app's own routes (Starlette's TestClient), each browser keeping its cookies.
"""

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from starlette.responses import Response
from starlette.testclient import TestClient
from tests.support.console import (
    SECRET,
    Person,
    api_key,
    bearer,
    console_client,
    deployed,
    field,
    signed_in,
    waiting_run,
)

from ecp_core.identity import ActorIdentity
from ecp_core.system import FixedClock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.auth import mint_token
from ecp_http.server.console.browser import CONSOLE_CSP
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions

pytestmark = pytest.mark.integration

TENANT = "console-acme"
ADMIN = bearer(TENANT, "admin")


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


@pytest.fixture
def approval(client) -> tuple[str, str]:
    """A run of ``pay`` waiting on its approval: the run id and the approval id."""
    deployed(client, ADMIN, "pay")
    return waiting_run(client, ADMIN, "pay")


def approver(client: TestClient) -> Person:
    key, _ = api_key(client, ADMIN, "approver")
    return signed_in(client, key)


def status_of(client: TestClient, approval_id: str) -> str:
    return client.get(f"/v1/approvals/{approval_id}", headers=ADMIN).json()["status"]


def resolve_form(page: str, approval_id: str, decision: str = "approve") -> dict[str, str]:
    action = f"/console/approvals/{approval_id}/resolve"
    return {
        "csrf_token": field(page, "csrf_token", action),
        "action_digest": field(page, "action_digest", action),
        "decision": decision,
        "reason": "checked",
    }


@pytest.mark.spec("C15 console-sign-in")
def test_an_api_key_signs_in_once_to_a_sealed_strict_session(client, approval):
    key, _ = api_key(client, ADMIN, "approver")
    person = Person(client)
    answer = person.sign_in(key)
    assert (answer.status_code, answer.headers["location"]) == (303, "/console/inbox")
    (cookie,) = [
        c for c in answer.headers.get_list("set-cookie") if c.startswith(CONSOLE_COOKIE + "=")
    ]
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/console"} <= flags
    assert "max-age=43200" in flags  # ECP_CONSOLE_SESSION_HOURS, 12 by default
    assert key not in cookie and key.split("_", 2)[2] not in cookie  # sealed, never the key
    inbox = person.get("/console/inbox")
    assert inbox.status_code == 200
    assert TENANT in inbox.text and "approver" in inbox.text
    assert f"/console/approvals/{approval[1]}" in inbox.text


@pytest.mark.spec("C15 console-sign-in")
def test_the_cookie_is_secure_unless_insecure_cookies_are_allowed():
    for client in console_client(insecure_cookies=False):
        key, _ = api_key(client, ADMIN, "viewer")
        answer = Person(client).sign_in(key)
        (cookie,) = [
            c for c in answer.headers.get_list("set-cookie") if c.startswith("ecp_console=")
        ]
        assert "secure" in {part.strip().lower() for part in cookie.split(";")}


@pytest.mark.spec("C15 console-sign-in")
def test_a_jwt_signs_in_with_exactly_its_tenant_and_roles(client, approval):
    token = mint_token(SECRET, tenant=TENANT, roles=["approver"], subject="jo@example.com")
    person = signed_in(client, token)
    page = person.get(f"/console/approvals/{approval[1]}")
    assert page.status_code == 200
    assert "jo@example.com" in page.text and "Approve" in page.text
    other = signed_in(client, mint_token(SECRET, tenant="elsewhere", roles=["approver"]))
    assert other.get(f"/console/approvals/{approval[1]}").status_code == 404


@pytest.mark.spec("C15 console-sign-in")
def test_a_bad_credential_or_form_starts_no_session(client):
    person = Person(client)
    for credential, status in (
        ("ecp_abcdefgh_notakey", 401),
        ("eyJ.not.a.token", 401),
        (mint_token("another-secret-" + "x" * 30, tenant=TENANT, roles=["admin"]), 401),
        ("", 422),
        ("two words", 422),
        ("x" * 9000, 422),
    ):
        answer = person.sign_in(credential)
        assert answer.status_code == status, credential[:20]
        assert CONSOLE_COOKIE not in person.cookies
        assert answer.headers["content-security-policy"] == CONSOLE_CSP
    token = mint_token(SECRET, tenant=TENANT, roles=["admin"])
    forged = Person(client).post("/console/sign-in", {"csrf_token": "x", "credential": token})
    assert forged.status_code == 403  # a form this browser did not fetch
    assert CONSOLE_COOKIE + "=" not in forged.headers.get("set-cookie", "")


@pytest.mark.spec("C15 console-sign-in")
def test_no_session_or_a_broken_one_or_an_expired_one_goes_to_sign_in(client):
    now = datetime.now(UTC)
    past = ConsoleSessions(
        SECRET, hours=1, secure=False, clock=FixedClock(now - timedelta(hours=2))
    )
    actor = ActorIdentity(
        subject="old", auth_method=AuthMethod.BEARER, roles=(ServiceRole.ADMIN,), tenant_id=TENANT
    )
    response = Response()
    past.start(response, actor, key_id=None, until=None)
    expired = response.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    for cookie in (None, "forged", "v1.AAAA", "v1." + "A" * 400, expired, "%C3%A9t%C3%A9"):
        person = Person(client, {} if cookie is None else {CONSOLE_COOKIE: cookie})
        answer = person.get("/console/inbox")
        assert (answer.status_code, answer.headers["location"]) == (303, "/console/sign-in")
        assert answer.headers["content-security-policy"] == CONSOLE_CSP
        assert CONSOLE_COOKIE not in person.cookies


@pytest.mark.spec("C15 console-revocation")
def test_a_revoked_key_ends_its_sessions_at_the_next_request(client, approval):
    key, key_id = api_key(client, ADMIN, "approver")
    first, second = signed_in(client, key), signed_in(client, key)
    assert first.get("/console/inbox").status_code == 200
    assert client.delete(f"/v1/api-keys/{key_id}", headers=ADMIN).status_code == 200
    for person in (first, second):
        answer = person.get(f"/console/approvals/{approval[1]}")
        assert (answer.status_code, answer.headers["location"]) == (303, "/console/sign-in")
    assert Person(client).sign_in(key).status_code == 401


@pytest.mark.spec("C15 console-sign-in")
def test_signing_out_ends_the_session(client):
    person = approver(client)
    inbox = person.get("/console/inbox").text
    refused = person.post("/console/sign-out", {"csrf_token": "forged"})
    assert refused.status_code == 403
    out = person.post(
        "/console/sign-out", {"csrf_token": field(inbox, "csrf_token", "/console/sign-out")}
    )
    assert (out.status_code, out.headers["location"]) == (303, "/console/sign-in")
    assert person.get("/console/inbox").status_code == 303


@pytest.mark.spec("C15 console-csrf")
def test_a_post_without_this_sessions_token_is_403_and_changes_nothing(client, approval):
    _, approval_id = approval
    one, two = approver(client), approver(client)
    page_one = one.get(f"/console/approvals/{approval_id}").text
    page_two = two.get(f"/console/approvals/{approval_id}").text
    form = resolve_form(page_one, approval_id)
    path = f"/console/approvals/{approval_id}/resolve"
    for token in (None, "", "forged", resolve_form(page_two, approval_id)["csrf_token"]):
        fields = {k: v for k, v in form.items() if k != "csrf_token"}
        if token is not None:
            fields["csrf_token"] = token
        refused = one.post(path, fields)
        assert refused.status_code == 403, refused.text
        assert refused.headers["content-security-policy"] == CONSOLE_CSP
    edit = {**form, "csrf_token": form["csrf_token"], "edited_payload": "{}"}
    assert one.post(f"/console/approvals/{approval_id}/edit", edit).status_code == 403  # resolve's
    assert status_of(client, approval_id) == "pending"
    done = one.post(path, form)
    assert (done.status_code, done.headers["location"]) == (
        303,
        f"/console/approvals/{approval_id}",
    )
    assert status_of(client, approval_id) == "resolved"


@pytest.mark.spec("C15 console-csp")
def test_every_console_response_sends_the_policy_and_no_inline_script_or_style(client, approval):
    assert CONSOLE_CSP == (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    person = approver(client)
    answers = [
        Person(client).get("/console/sign-in"),
        Person(client).get("/console/inbox"),
        person.get("/console"),
        person.get("/console/inbox"),
        person.get("/console/inbox", deployment="pay"),
        person.get(f"/console/approvals/{approval[1]}"),
        person.get("/console/approvals/no-such-approval"),
        person.get("/console/static/console.css"),
        person.post(f"/console/approvals/{approval[1]}/resolve", {}),
    ]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CONSOLE_CSP, answer.request.url
        assert answer.headers["x-content-type-options"] == "nosniff"
        if answer.headers.get("content-type", "").startswith("text/html"):
            assert answer.headers["cache-control"] == "no-store"
            scripts = re.findall(
                r"<script[^>]*>.*?</script>", answer.text, re.DOTALL | re.IGNORECASE
            )
            assert answer.text.lower().count("<script") == len(scripts)
            for script in scripts:  # files the wheel ships only, never inline code
                assert re.fullmatch(
                    r'<script src="/console/static/[a-z.-]+" defer></script>', script
                )
            assert " style=" not in answer.text and "<style" not in answer.text
    assert answers[7].headers["content-type"].startswith("text/css")


@pytest.mark.spec("C15 console-roles")
def test_a_reader_sees_no_decision_forms_and_a_forged_post_is_403(client, approval):
    _, approval_id = approval
    operator = signed_in(client, api_key(client, ADMIN, "operator")[0])  # reads, may not resolve
    page = operator.get(f"/console/approvals/{approval_id}")
    assert page.status_code == 200
    assert "/resolve" not in page.text and "/edit" not in page.text
    assert "may read this approval but not resolve it" in page.text
    assert "Run timeline so far" in page.text
    inbox = operator.get("/console/inbox").text
    assert "not resolve" in inbox and approval_id not in inbox
    digest = client.get(f"/v1/approvals/{approval_id}", headers=ADMIN).json()["action_digest"]
    session = field(page.text, "csrf_token", "/console/sign-out")
    forged = {"csrf_token": session, "action_digest": digest, "decision": "approve"}
    assert operator.post(f"/console/approvals/{approval_id}/resolve", forged).status_code == 403
    analyst = signed_in(client, api_key(client, ADMIN, "analyst")[0])  # no approval_read
    assert analyst.get("/console/inbox").status_code == 403
    assert analyst.get(f"/console/approvals/{approval_id}").status_code == 403
    assert status_of(client, approval_id) == "pending"


@pytest.mark.spec("C15 console-roles")
def test_another_tenants_approval_is_a_404_page(client, approval):
    _, approval_id = approval
    other_admin = bearer("console-other", "admin")
    key, _ = api_key(client, other_admin, "approver")
    stranger = signed_in(client, key)
    page = stranger.get(f"/console/approvals/{approval_id}")
    assert page.status_code == 404
    assert "Pay the supplier" not in page.text
    assert approval_id not in stranger.get("/console/inbox").text
    mine = approver(client).get(f"/console/approvals/{approval_id}").text
    form = resolve_form(mine, approval_id)
    form["csrf_token"] = field(page.text, "csrf_token", "/console/sign-out")
    assert stranger.post(f"/console/approvals/{approval_id}/resolve", form).status_code == 403
    assert status_of(client, approval_id) == "pending"


@pytest.mark.spec("C15 console-approval")
def test_a_stale_form_resolves_nothing_and_says_so(client):
    deployed(client, ADMIN, "two", min_approvals=2)
    _, approval_id = waiting_run(client, ADMIN, "two")
    first, second = approver(client), approver(client)
    page_first = first.get(f"/console/approvals/{approval_id}").text
    page_second = second.get(f"/console/approvals/{approval_id}").text
    assert "0 of 2" in page_first
    done = first.post(
        f"/console/approvals/{approval_id}/resolve", resolve_form(page_first, approval_id)
    )
    assert done.status_code == 303
    stale = second.post(
        f"/console/approvals/{approval_id}/resolve", resolve_form(page_second, approval_id)
    )
    assert stale.status_code == 409
    assert "Nothing was resolved" in stale.text and "1 of 2" in stale.text
    approval = client.get(f"/v1/approvals/{approval_id}", headers=ADMIN).json()
    assert approval["status"] == "pending" and len(approval["approvals"]) == 1
    fresh = second.post(
        f"/console/approvals/{approval_id}/resolve", resolve_form(stale.text, approval_id)
    )
    assert fresh.status_code == 303
    assert status_of(client, approval_id) == "resolved"


@pytest.mark.spec("C15 console-approval")
def test_edit_then_approve_shows_the_diff_first_and_the_run_completes(client, approval):
    run_id, approval_id = approval
    person = approver(client)
    page = person.get(f"/console/approvals/{approval_id}").text
    assert "&#34;amount&#34;: 1200" in page or '"amount": 1200' in page
    assert re.search(r'node-here">\s*<span class="node-id"><code>review</code>', page)
    assert re.search(r'node-ahead">\s*<span class="node-id"><code>done</code>', page)
    edit_action = f"/console/approvals/{approval_id}/edit"
    edit = {
        "csrf_token": field(page, "csrf_token", edit_action),
        "action_digest": field(page, "action_digest", edit_action),
        "edited_payload": '{"supplier": "ACME", "amount": 900}',
        "reason": "capped",
    }
    bad = person.post(edit_action, {**edit, "edited_payload": "{not json"})
    assert bad.status_code == 422 and "not valid JSON" in bad.text
    listed = person.post(edit_action, {**edit, "edited_payload": "[1, 2]"})
    assert listed.status_code == 422 and "JSON object" in listed.text
    diff = person.post(edit_action, edit)
    assert diff.status_code == 200
    assert 'class="line del">-  &#34;amount&#34;: 1200,' in diff.text
    assert 'class="line add">+  &#34;amount&#34;: 900,' in diff.text
    assert status_of(client, approval_id) == "pending"  # nothing resolved before the confirm
    action = f"/console/approvals/{approval_id}/resolve"
    confirm = {
        "csrf_token": field(diff.text, "csrf_token", action),
        "action_digest": field(diff.text, "action_digest", action),
        "decision": field(diff.text, "decision", action),
        "edited_payload": field(diff.text, "edited_payload", action),
        "reason": "capped",
    }
    assert confirm["decision"] == "edit_and_approve"
    assert person.post(action, confirm).status_code == 303
    resolved = client.get(f"/v1/approvals/{approval_id}", headers=ADMIN).json()
    assert resolved["resolution"]["edited_payload"] == {"supplier": "ACME", "amount": 900}
    assert resolved["resolution"]["reason"] == "capped"
    run = client.get(f"/runs/{run_id}", headers={**ADMIN, "Prefer": "wait=10"}).json()
    assert run["status"] == "completed"
    after = person.get(f"/console/approvals/{approval_id}").text
    assert "edit and approve by" in after and "/resolve" not in after
    assert re.search(r'node-done">\s*<span class="node-id"><code>done</code>', after)


@pytest.mark.spec("C15 console-approval")
def test_bad_decision_forms_are_4xx_pages_and_change_nothing(client, approval):
    _, approval_id = approval
    person = approver(client)
    page = person.get(f"/console/approvals/{approval_id}").text
    form = resolve_form(page, approval_id)
    path = f"/console/approvals/{approval_id}/resolve"
    for changes in (
        {"decision": "maybe"},
        {"action_digest": ""},
        {"action_digest": "sha256:" + "0" * 64},
        {"decision": "edit_and_approve", "edited_payload": "nope"},
        {"decision": "reject", "reason": ""},
        {"reason": "r" * 1001},
    ):
        answer = person.post(path, {**form, **changes})
        assert 400 <= answer.status_code < 500, (changes, answer.status_code)
        assert answer.headers["content-type"].startswith("text/html")
    assert person.get("/console/inbox", cursor="garbage").status_code == 422
    assert person.get("/console/inbox", unknown="1").status_code == 422
    assert status_of(client, approval_id) == "pending"


@pytest.mark.spec("C15 console-approval")
def test_reject_with_a_comment_fails_the_run(client, approval):
    run_id, approval_id = approval
    person = approver(client)
    page = person.get(f"/console/approvals/{approval_id}").text
    form = {**resolve_form(page, approval_id, "reject"), "reason": "wrong supplier"}
    assert person.post(f"/console/approvals/{approval_id}/resolve", form).status_code == 303
    run = client.get(f"/runs/{run_id}", headers={**ADMIN, "Prefer": "wait=10"}).json()
    assert run["status"] == "failed"
    after = person.get(f"/console/approvals/{approval_id}").text
    assert "wrong supplier" in after and "reject by" in after


@pytest.mark.spec("C15 console-approval")
def test_an_approve_form_gone_stale_by_an_escalation_resolves_nothing_and_says_so():
    for client in console_client(escalation_interval_seconds=0.1):
        deployed(client, ADMIN, "late", sla_seconds=1)
        run_id, approval_id = waiting_run(client, ADMIN, "late")
        person = approver(client)
        page = person.get(f"/console/approvals/{approval_id}").text
        form = resolve_form(page, approval_id)
        deadline = time.monotonic() + 20
        while status_of(client, approval_id) != "escalated":  # the sweep's next round
            assert time.monotonic() < deadline, "the approval was never escalated"
            time.sleep(0.1)
        stale = person.post(f"/console/approvals/{approval_id}/resolve", form)
        assert stale.status_code == 409
        assert "Nothing was resolved" in stale.text and "Replaced by a newer approval" in stale.text
        assert "/resolve" not in stale.text  # an escalated approval offers no decision
        # Its replacement (itself escalated again each second) is the one pending approval.
        inbox = person.get("/console/inbox").text
        assert len(listed_ids(inbox)) == 1 and listed_ids(inbox) != [approval_id]
        assert "escalated</span>" in inbox
        assert client.get(f"/runs/{run_id}", headers=ADMIN).json()["status"] == "waiting_approval"


def listed_ids(html: str) -> list[str]:
    return re.findall(r'href="/console/approvals/([^"]+)"', html)
