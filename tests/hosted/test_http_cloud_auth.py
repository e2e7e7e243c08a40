"""Hosted login over real HTTP: the loopback identity provider, the app on memory and PostgreSQL.

Redirects are followed by hand and cookies kept by hand (tests/support/cloud_login.py), so every
hop is checked: login, the provider's authorize, the callback, refresh and logout.
"""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.testclient import TestClient
from tests.support.cloud_login import (
    CLIENT_ID,
    COOKIE_PASSWORD,
    HTML,
    IDP_API_KEY,
    ORIGIN,
    Browser,
    cloud_app,
)

from ecp_core.billing.model import PlanName, SubscriptionStatus
from ecp_http.server.sealing import Sealer
from ecp_http.server.sessions import LOGIN_COOKIE, SESSION_COOKIE
from ecp_idp.standin import Login, StandinIdentityProvider

pytestmark = pytest.mark.integration

PROBLEM_JSON = "application/problem+json"


@pytest.fixture
def idp() -> Iterator[StandinIdentityProvider]:
    with StandinIdentityProvider(client_id=CLIENT_ID, api_key=IDP_API_KEY) as server:
        server.next_login = Login(user_id="user_ada", organization_id="org_acme", roles=("admin",))
        yield server


@pytest.fixture(params=["memory", "postgres"])
def client(request, idp) -> Iterator[TestClient]:
    database = None if request.param == "memory" else request.getfixturevalue("fresh_database")
    with TestClient(cloud_app(idp.url, database_url=database)) as test_client:
        yield test_client


@pytest.fixture
def browser(client) -> Browser:
    return Browser(client)


def ecp(client: TestClient):
    return client.app.state.runtime.ecp


def assert_problem(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    assert response.json()["code"] == code


def state_of(store_client: TestClient, org: str) -> tuple[str | None, object, list]:
    """The tenant bound to ``org``, its subscription and its keys (what a login may change)."""
    tenant = ecp(store_client).accounts.tenant_of("workos", org)
    if tenant is None:
        return None, None, []
    with store_client.app.state.runtime.store.unit_of_work() as tx:
        return tenant, tx.subscriptions.get(tenant), tx.api_keys.page(tenant, limit=10)


@pytest.mark.spec("§4.5 login-callback", "§3.6 first-login-trial", "§9.1 hosted-activation")
def test_the_first_login_activates_once_with_a_key_that_works(client, browser):
    started = browser.get("/v1/cloud/auth/login")
    assert started.status_code == 303
    target = urlsplit(started.headers["location"])
    query = {name: values[0] for name, values in parse_qs(target.query).items()}
    assert target.path == "/user_management/authorize"
    assert query["client_id"] == CLIENT_ID
    assert (query["response_type"], query["code_challenge_method"], query["provider"]) == (
        "code",
        "S256",
        "authkit",
    )
    assert len(query["state"]) >= 43
    assert len(query["code_challenge"]) == 43
    login_cookie = started.headers["set-cookie"]
    assert "HttpOnly" in login_cookie
    assert "Max-Age=600" in login_cookie
    assert "Path=/v1/cloud/auth" in login_cookie
    assert "samesite=lax" in login_cookie.lower()

    answered = httpx.get(started.headers["location"], follow_redirects=False)
    back = urlsplit(answered.headers["location"])
    done = browser.get(f"{back.path}?{back.query}")
    assert done.status_code == 200, done.text
    assert done.headers["cache-control"] == "no-store"
    body = done.json()
    assert body["activated"] is True
    assert body["session"]["organization_id"] == "org_acme"
    assert body["session"]["roles"] == ["admin"]
    key = body["quickstart_key"]
    assert (key["role"], key["tenant_id"]) == ("analyst", body["session"]["tenant_id"])
    assert LOGIN_COOKIE not in browser.cookies
    assert SESSION_COOKIE in browser.cookies

    tenant, trial, keys = state_of(client, "org_acme")
    assert tenant == body["session"]["tenant_id"]
    assert tenant.startswith("tn_")
    assert "org_acme" not in tenant
    assert (trial.plan, trial.status) == (PlanName.TRIAL, SubscriptionStatus.TRIALING)
    assert trial.period_end - trial.period_start == timedelta(days=14)
    assert [k.fingerprint for k in keys] == [key["fingerprint"]]

    with_key = client.get("/v1/graphs", headers={"X-API-Key": key["key"]})
    assert with_key.status_code == 200, with_key.text
    assert client.get("/v1/api-keys", headers={"X-API-Key": key["key"]}).status_code == 403
    as_admin = browser.get("/v1/api-keys")  # the session cookie, with the admin role
    assert as_admin.status_code == 200, as_admin.text
    assert [k["fingerprint"] for k in as_admin.json()["api_keys"]] == [key["fingerprint"]]


@pytest.mark.spec("§3.6 first-login-trial", "§4.5 login-callback")
def test_a_later_login_creates_nothing_and_the_key_is_shown_once(client, browser, idp):
    page = browser.log_in(HTML)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "<script" not in page.text
    before = state_of(client, "org_acme")
    (key,) = before[2]
    assert key.fingerprint in page.text
    plaintext = page.text.split('id="api-key">')[1].split("<")[0]
    assert client.get("/v1/graphs", headers={"X-API-Key": plaintext}).status_code == 200

    idp.next_login = Login(user_id="user_bob", organization_id="org_acme", roles=("viewer",))
    again = Browser(client).log_in(HTML)
    assert again.status_code == 303
    assert again.headers["location"] == "/account"
    as_json = Browser(client).log_in()
    assert as_json.json()["activated"] is False
    assert as_json.json()["quickstart_key"] is None
    assert as_json.json()["session"]["roles"] == ["viewer"]
    assert state_of(client, "org_acme") == before


@pytest.mark.spec("§5 hosted-identity", "§5 tenant-isolation")
def test_each_organization_owns_its_tenant_whatever_the_user(client, idp):
    first = Browser(client).log_in().json()
    idp.next_login = Login(user_id="user_ada", organization_id="org_other", roles=("admin",))
    other = Browser(client).log_in().json()
    assert first["session"]["tenant_id"] != other["session"]["tenant_id"]
    key = other["quickstart_key"]["key"]
    listed = Browser(client)
    listed.log_in()
    assert [k["tenant_id"] for k in listed.get("/v1/api-keys").json()["api_keys"]] == [
        other["session"]["tenant_id"]
    ]
    assert client.get("/v1/graphs", headers={"X-API-Key": key}).status_code == 200


def _expired_login_cookie(state: str) -> str:
    past = datetime.now(UTC) - timedelta(seconds=1)
    return Sealer(COOKIE_PASSWORD, "ecp login state").seal(
        {"state": state, "verifier": "v" * 43}, expires_at=past
    )


def _tampered(sealed: str) -> str:
    at = len(sealed) // 2
    return sealed[:at] + ("A" if sealed[at] != "A" else "B") + sealed[at + 1 :]


@pytest.mark.spec("§4.5 login-callback", "C12 hosted-sessions")
@pytest.mark.parametrize(
    "case",
    [
        "no login cookie",
        "expired login cookie",
        "tampered login cookie",
        "wrong state",
        "no state",
        "no code",
        "provider error",
        "replayed code",
        "token for another organization",
    ],
)
def test_unexpected_callbacks_are_400_and_change_nothing(client, browser, idp, case):
    if case == "provider error":
        idp.next_error = "access_denied"
    if case == "token for another organization":
        idp.next_login = Login(organization_id="org_acme", token_organization_id="org_evil")
    callback = browser.start_login()
    query = {name: values[0] for name, values in parse_qs(urlsplit(callback).query).items()}
    state = query["state"]
    if case == "no login cookie":
        browser.cookies.clear()
    elif case == "expired login cookie":
        browser.cookies[LOGIN_COOKIE] = _expired_login_cookie(state)
    elif case == "tampered login cookie":
        browser.cookies[LOGIN_COOKIE] = _tampered(browser.cookies[LOGIN_COOKIE])
    elif case == "wrong state":
        other = ("y" if state.startswith("x") else "x") + state[1:]  # never the state itself
        callback = callback.replace(state, other)
    elif case == "no state":
        callback = f"/v1/cloud/auth/callback?code={query['code']}"
    elif case == "no code":
        callback = f"/v1/cloud/auth/callback?state={state}"
    elif case == "replayed code":
        kept = dict(browser.cookies)
        assert browser.get(callback).status_code == 200
        browser.cookies = kept  # the same login cookie and code once more
    before = {org: state_of(client, org) for org in ("org_acme", "org_evil", "org_standin")}
    refused = browser.get(callback)
    assert_problem(refused, 400, "login_rejected")
    assert {org: state_of(client, org) for org in before} == before
    assert SESSION_COOKIE not in browser.cookies or case == "replayed code"


@pytest.mark.spec("§5 unknown-role-slug", "§4.5 login-callback")
@pytest.mark.parametrize("roles", [("member",), ("operator",), ("admin", "owner"), ()])
def test_an_unknown_role_slug_is_refused_and_binds_nothing(client, browser, idp, roles):
    idp.next_login = Login(organization_id="org_acme", roles=roles)
    refused = browser.log_in()
    assert_problem(refused, 403, "unknown_role")
    assert state_of(client, "org_acme") == (None, None, [])
    assert SESSION_COOKIE not in browser.cookies


@pytest.mark.spec("C12 hosted-sessions", "§5 hosted-identity")
def test_a_tampered_or_foreign_session_cookie_is_401(client, browser):
    browser.log_in()
    sealed = browser.cookies[SESSION_COOKIE]
    browser.cookies[SESSION_COOKIE] = _tampered(sealed)
    assert_problem(browser.get("/v1/graphs"), 401, "unauthenticated")
    foreign = Sealer("another-password-of-at-least-32-chars!", "ecp session")
    browser.cookies[SESSION_COOKIE] = foreign.seal(
        {
            "t": "tn_x",
            "o": "org_x",
            "u": "u",
            "r": ["admin"],
            "x": 2**40,
            "s": None,
            "a": "",
            "f": "",
        },
        expires_at=datetime.now(UTC) + timedelta(hours=1),
    )
    assert_problem(browser.get("/v1/graphs"), 401, "unauthenticated")


def _expire_access(browser: Browser) -> None:
    """Re-seal the browser's session as if its access token had expired a second ago."""
    sealer = Sealer(COOKIE_PASSWORD, "ecp session")
    data = sealer.unseal(browser.cookies[SESSION_COOKIE], now=datetime.now(UTC))
    data["x"] = int(datetime.now(UTC).timestamp()) - 1
    browser.cookies[SESSION_COOKIE] = sealer.seal(
        data, expires_at=datetime.now(UTC) + timedelta(days=1)
    )


@pytest.mark.spec("C12 hosted-sessions")
def test_an_expired_session_is_refreshed_once_with_its_refresh_token(client, browser):
    tenant = browser.log_in().json()["session"]["tenant_id"]
    _expire_access(browser)
    expired = dict(browser.cookies)
    refused = browser.get("/v1/graphs")
    assert_problem(refused, 401, "unauthenticated")
    assert "/v1/cloud/auth/refresh" in refused.json()["detail"]

    renewed = browser.get("/v1/cloud/auth/refresh")
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["tenant_id"] == tenant
    assert browser.cookies[SESSION_COOKIE] != expired[SESSION_COOKIE]
    assert browser.get("/v1/graphs").status_code == 200

    browser.cookies = expired  # the refresh token was used: it never works twice
    assert_problem(browser.get("/v1/cloud/auth/refresh"), 400, "login_rejected")
    assert_problem(Browser(client).get("/v1/cloud/auth/refresh"), 401, "unauthenticated")


@pytest.mark.spec("C12 hosted-sessions")
def test_logout_clears_the_session_and_ends_it_at_the_provider(client, browser, idp):
    browser.log_in()
    kept = dict(browser.cookies)
    out = browser.get("/v1/cloud/auth/logout")
    assert out.status_code == 303
    assert SESSION_COOKIE not in browser.cookies
    target = urlsplit(out.headers["location"])
    assert target.path == "/user_management/sessions/logout"
    query = parse_qs(target.query)
    assert query["return_to"] == [ORIGIN + "/"]
    ended = httpx.get(out.headers["location"], follow_redirects=False)
    assert ended.headers["location"] == ORIGIN + "/"
    assert not idp.session_live(query["session_id"][0])
    assert_problem(browser.get("/v1/graphs"), 401, "unauthenticated")
    browser.cookies = kept  # the old cookie can no longer be renewed: the session ended
    assert_problem(browser.get("/v1/cloud/auth/refresh"), 400, "login_rejected")
    anonymous = Browser(client).get("/v1/cloud/auth/logout")
    assert (anonymous.status_code, anonymous.headers["location"]) == (303, ORIGIN + "/")


def test_the_login_routes_exist_only_when_identity_is_enabled():
    import base64
    import secrets

    from ecp_core.memory import MemoryStore
    from ecp_http.config.settings import Settings
    from ecp_http.startup.app import create_app

    settings = Settings(
        jwt_secret="x" * 32,
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
    )
    with TestClient(create_app(settings, start_workers=False, storage=MemoryStore())) as plain:
        assert plain.get("/v1/cloud/auth/login", follow_redirects=False).status_code == 404
