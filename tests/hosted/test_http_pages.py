"""The hosted pages over HTTP: headers, sessions, CSRF tokens and roles (memory store, stand-in IdP).

The whole journey in a real browser is ``tests/hosted/test_hosted_offer.py``; here each rule alone.
"""

import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient
from tests.support.cloud_login import HTML, Browser, cloud_app

from ecp_http.server.pages.render import CONTENT_SECURITY_POLICY
from ecp_idp.standin import Login, StandinIdentityProvider

pytestmark = pytest.mark.integration

RULE = "C12 pages-csp"


@pytest.fixture
def idp() -> Iterator[StandinIdentityProvider]:
    with StandinIdentityProvider(client_id="client_test", api_key="sk_test_standin") as provider:
        yield provider


@pytest.fixture
def client(idp) -> Iterator[TestClient]:
    with TestClient(cloud_app(idp.url, database_url=None)) as test_client:
        yield test_client


def signed_in(client: TestClient, idp: StandinIdentityProvider, *roles: str) -> Browser:
    idp.next_login = Login(user_id="u1", organization_id="org_pages", roles=roles or ("admin",))
    browser = Browser(client)
    assert browser.log_in(HTML).status_code in (200, 303)  # activated, or back to /account
    return browser


def post(browser: Browser, path: str, fields: dict[str, str]) -> httpx.Response:
    cookie = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    return browser.client.post(
        path,
        data=fields,
        headers={**HTML, "Cookie": cookie},
        follow_redirects=False,
    )


def token_of(html: str, action: str) -> str:
    found = re.search(
        rf'action="{re.escape(action)}">\s*<input type="hidden" name="csrf_token" value="([^"]+)"',
        html,
    )
    assert found is not None, f"no form posting to {action}"
    return found.group(1)


@pytest.mark.spec(RULE, "§4.5 hosted-pages")
def test_every_page_is_script_free_under_the_contracts_policy(client, idp):
    landing = client.get("/")
    assert landing.status_code == 200
    assert landing.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert CONTENT_SECURITY_POLICY == (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'"
    )
    assert landing.headers["cache-control"] == "no-store"
    assert "/v1/cloud/auth/login" in landing.text
    account = signed_in(client, idp).get("/account", HTML)
    for answer in (landing, account):
        assert "<script" not in answer.text.lower()
        assert " style=" not in answer.text  # inline style would need 'unsafe-inline'
    assert account.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    css = client.get("/static/ecp.css")
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")


@pytest.mark.spec("§4.5 hosted-pages")
def test_the_account_page_sends_a_browser_without_a_session_to_login(client):
    away = client.get("/account", headers=HTML, follow_redirects=False)
    assert away.status_code == 303
    assert away.headers["location"] == "/v1/cloud/auth/login"
    broken = client.get(
        "/account", headers={**HTML, "Cookie": "ecp_session=forged"}, follow_redirects=False
    )
    assert (broken.status_code, broken.headers["location"]) == (303, "/v1/cloud/auth/login")


@pytest.mark.spec(RULE)
def test_a_form_post_without_this_sessions_token_is_refused_and_changes_nothing(client, idp):
    browser = signed_in(client, idp)
    page = browser.get("/account", HTML).text
    (key_id,) = re.findall(r'action="/account/keys/([^/"]+)/revoke"', page)
    revoke = f"/account/keys/{key_id}/revoke"
    replace_token = token_of(page, f"/account/keys/{key_id}/replace")
    for fields in ({}, {"csrf_token": "forged"}, {"csrf_token": replace_token}):
        refused = post(browser, revoke, fields)
        assert refused.status_code == 403, refused.text
    assert "/revoke" in browser.get("/account", HTML).text  # still live
    done = post(browser, revoke, {"csrf_token": token_of(page, revoke)})
    assert (done.status_code, done.headers["location"]) == (303, "/account")
    assert "revoked" in browser.get("/account", HTML).text


@pytest.mark.spec(RULE)
def test_another_sessions_token_does_not_pass(client, idp):
    first = signed_in(client, idp)
    page = first.get("/account", HTML).text
    (key_id,) = re.findall(r'action="/account/keys/([^/"]+)/revoke"', page)
    revoke = f"/account/keys/{key_id}/revoke"
    second = signed_in(client, idp)  # the same organization and tenant, another session
    assert post(second, revoke, {"csrf_token": token_of(page, revoke)}).status_code == 403


def test_a_form_route_takes_form_posts_only(client, idp):
    browser = signed_in(client, idp)
    cookie = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    answer = client.post(
        "/account/checkout",
        json={"csrf_token": "x"},
        headers={"Cookie": cookie},
        follow_redirects=False,
    )
    assert answer.status_code == 415


@pytest.mark.spec("§4.5 hosted-pages")
def test_replacing_a_key_shows_the_new_one_once_and_retires_the_old(client, idp):
    browser = signed_in(client, idp)
    page = browser.get("/account", HTML).text
    (key_id,) = re.findall(r'action="/account/keys/([^/"]+)/replace"', page)
    replaced = post(
        browser,
        f"/account/keys/{key_id}/replace",
        {"csrf_token": token_of(page, f"/account/keys/{key_id}/replace")},
    )
    assert replaced.status_code == 200
    new_key = re.search(r'id="api-key">([^<]+)<', replaced.text)
    assert new_key is not None
    assert client.get("/v1/graphs", headers={"X-API-Key": new_key.group(1)}).status_code == 200
    after = browser.get("/account", HTML).text
    assert new_key.group(1) not in after
    assert after.count("revoked") == 1


@pytest.mark.spec("§5 hosted-identity")
def test_a_viewer_sees_no_billing_or_key_controls_and_cannot_post_them(client, idp):
    browser = signed_in(client, idp, "viewer")
    page = browser.get("/account", HTML).text
    assert "/account/checkout" not in page
    assert "/revoke" not in page
    assert "No keys." in page
