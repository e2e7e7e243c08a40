"""The console end to end, in Debian's headless Chromium against a real server on PostgreSQL.

An approver's API key signs in → the inbox lists the run's approval → its page shows the payload
→ the payload is edited → the diff page shows the change → it is approved → the run completes.
An approval decided elsewhere while its page is open: pressing Approve resolves nothing and says so.
An operator (who reads approvals but may not resolve them) sees it without decision forms; another tenant's session gets a 404 page.
Every page is saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``), the approval
page in the dark scheme too; none scrolls sideways, and axe-core finds no serious or critical
violation on any.
"""

import base64
import itertools
import os
import secrets
from collections.abc import Callable, Iterator

import attrs
import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait
from tests.support.accessibility import serious_violations
from tests.support.browser import HEIGHT, SCREENS, capture
from tests.support.console import reviewed
from tests.support.e2e_server import serving

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

_names = itertools.count()
TENANT = "console-browser"
WAIT = {"Prefer": "wait=10"}


@attrs.frozen
class Console:
    """The running server, a client of its API, and an admin's headers."""

    base_url: str
    client: httpx.Client
    secret: str

    def headers(self, tenant: str = TENANT, role: str = "admin") -> dict[str, str]:
        token = mint_token(self.secret, tenant=tenant, roles=[role], subject="admin@example.com")
        return {"Authorization": f"Bearer {token}"}

    def key(self, role: str, tenant: str = TENANT) -> str:
        body = {"name": f"{role} in the browser", "role": role}
        made = self.client.post("/v1/api-keys", json=body, headers=self.headers(tenant))
        assert made.status_code == 201, made.text
        return str(made.json()["key"])


@pytest.fixture(scope="module")
def console(postgres_url, migrated_template) -> Iterator[Console]:
    """A server on its own database whose console cookies travel over loopback HTTP."""
    name = f"ecp_console_{os.getpid()}_{next(_names)}"
    database = create_database(postgres_url, name, template=migrated_template)
    secret = secrets.token_urlsafe(32)
    settings = Settings(
        database_url=database,
        jwt_secret=secret,
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        dispatch_poll_seconds=0.05,
        insecure_cookies=True,
    )
    try:
        with serving(lambda _: settings) as (base_url, client, _):
            yield Console(base_url=base_url, client=client, secret=secret)
    finally:
        drop_database(postgres_url, name)


def _until(browser: WebDriver, condition: Callable[[], object]) -> None:
    WebDriverWait(browser, 30).until(lambda _: condition())


def _fits(browser: WebDriver) -> None:
    """No sideways scroll: the document is no wider than the window's viewport."""
    scroll, inner = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth];"
    )
    assert int(scroll) <= int(inner), f"{browser.current_url} scrolls sideways"


def _shot(browser: WebDriver, name: str) -> None:
    """Screenshots at both widths, no sideways scroll, no serious accessibility violation."""
    capture(browser, f"console-{name}")
    _fits(browser)
    assert serious_violations(browser) == [], name


def _whole(browser: WebDriver, name: str, width: int = 1280) -> None:
    """The whole page, top to bottom, at ``width`` (for docs/console.md)."""
    browser.set_window_size(width, HEIGHT)
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(width, int(height) + 140)  # the window's frame takes some height
    browser.save_screenshot(str(SCREENS / f"console-{name}-whole-{width}.png"))
    browser.set_window_size(width, HEIGHT)


def _sign_in(browser: WebDriver, console: Console, key: str) -> None:
    browser.delete_all_cookies()
    browser.get(console.base_url + "/console/sign-in")
    browser.find_element(By.ID, "credential").send_keys(key)
    browser.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    _until(browser, lambda: browser.current_url.endswith("/console/inbox"))


@pytest.mark.spec("C15 console-browser", "C15 console-approval", "C15 console-inbox")
def test_an_approver_edits_and_approves_in_the_browser_and_the_run_completes(console, browser):
    admin = console.headers()
    api = console.client
    graph = reviewed("pay-browser", sla_seconds=7200)
    assert api.post("/v1/graphs", json=graph, headers=admin).status_code == 201
    deployment = {"deployment_ref": "pay-browser", "graph_id": "pay-browser"}
    assert api.post("/v1/deployments", json=deployment, headers=admin).status_code == 201
    payload = {"supplier": "ACME Tools", "amount": 1200, "currency": "EUR", "invoice": "INV-0042"}
    body = {"deployment_ref": "pay-browser", "input": payload}
    run = api.post("/runs", json=body, headers={**admin, **WAIT}).json()
    assert run["status"] == "waiting_approval", run
    (approval_id,) = run["pending_approval_ids"]

    browser.delete_all_cookies()
    browser.get(console.base_url + "/console/sign-in")
    _shot(browser, "sign-in")
    _sign_in(browser, console, console.key("approver"))
    _until(browser, lambda: browser.find_elements(By.LINK_TEXT, "Pay the supplier"))
    assert "due in 1 h 59 min" in browser.page_source or "due in 2 h" in browser.page_source
    _shot(browser, "inbox")

    browser.find_element(By.LINK_TEXT, "Pay the supplier").click()
    _until(browser, lambda: browser.find_elements(By.ID, "edited_payload"))
    assert "INV-0042" in browser.find_element(By.CSS_SELECTOR, "pre.json").text
    assert "waiting approval" in browser.find_element(By.CSS_SELECTOR, "ol.timeline").text
    here = browser.find_element(By.CSS_SELECTOR, "ol.graph li.node-here").text
    assert "review" in here and "waits here" in here
    _shot(browser, "approval")
    _whole(browser, "approval")
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    _shot(browser, "approval-dark")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    editor = browser.find_element(By.ID, "edited_payload")
    editor.clear()
    edited = '{"supplier": "ACME Tools", "amount": 900, "currency": "EUR", "invoice": "INV-0042"}'
    editor.send_keys(edited)
    browser.find_element(By.ID, "edit-reason").send_keys("Capped at the contract price")
    browser.find_element(By.XPATH, "//button[normalize-space()='Review the changes']").click()
    _until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "pre.diff"))
    diff = browser.find_element(By.CSS_SELECTOR, "pre.diff").text
    assert '-  "amount": 1200,' in diff and '+  "amount": 900,' in diff
    _shot(browser, "diff")
    pending = api.get(f"/v1/approvals/{approval_id}", headers=admin).json()
    assert pending["status"] == "pending"  # the diff resolved nothing

    browser.find_element(
        By.XPATH, "//button[normalize-space()='Approve with these changes']"
    ).click()
    _until(browser, lambda: "edit and approve by" in browser.page_source)
    _shot(browser, "resolved")
    _whole(browser, "resolved")
    done = api.get(f"/runs/{run['run_id']}", headers={**admin, **WAIT}).json()
    assert done["status"] == "completed"
    resolved = api.get(f"/v1/approvals/{approval_id}", headers=admin).json()
    assert resolved["resolution"]["edited_payload"]["amount"] == 900

    # A second run's approval decided elsewhere while its page is open: Approve resolves nothing.
    second = api.post("/runs", json=body, headers={**admin, **WAIT}).json()
    (other_id,) = second["pending_approval_ids"]
    browser.get(console.base_url + f"/console/approvals/{other_id}")
    _until(
        browser, lambda: browser.find_elements(By.XPATH, "//button[normalize-space()='Approve']")
    )
    elsewhere = {"decision": "reject", "reason": "Duplicate invoice"}
    resolve = f"/deployments/pay-browser/approvals/{other_id}/resolve"
    assert api.post(resolve, json=elsewhere, headers=admin).status_code == 200
    browser.find_element(By.XPATH, "//button[normalize-space()='Approve']").click()
    _until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "p.alert"))
    assert "Nothing was resolved" in browser.find_element(By.CSS_SELECTOR, "p.alert").text
    assert "reject by admin@example.com" in browser.page_source
    _shot(browser, "stale")

    _sign_in(browser, console, console.key("operator"))  # reads approvals, may not resolve
    browser.get(console.base_url + f"/console/approvals/{approval_id}")
    assert "Pay the supplier" in browser.find_element(By.TAG_NAME, "h1").text
    assert browser.find_elements(By.CSS_SELECTOR, "form[action$='/resolve']") == []
    assert browser.find_elements(By.CSS_SELECTOR, "form[action$='/edit']") == []
    _shot(browser, "approval-reader")

    _sign_in(browser, console, console.key("approver", tenant="console-elsewhere"))
    browser.get(console.base_url + f"/console/approvals/{approval_id}")
    assert "Not found" in browser.find_element(By.TAG_NAME, "h1").text
    assert "Pay the supplier" not in browser.page_source
    _shot(browser, "not-found")
