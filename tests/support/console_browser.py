"""The console in Chromium: a served app on its own database, signing in, and page checks.

Each browser test module gets its own server (the ``console`` fixture).
:func:`shot` saves a page at 390 and 1280 px (``test-artifacts/screens/console-*.png``), checks
that it never scrolls sideways and that axe-core finds no serious or critical violation.
"""

import base64
import itertools
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait
from tests.support.accessibility import serious_violations
from tests.support.browser import HEIGHT, SCREENS, capture
from tests.support.e2e_server import serving

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import create_database, drop_database

_names = itertools.count()
TENANT = "console-browser"
WAIT = {"Prefer": "wait=10"}


@attrs.frozen
class Console:
    """The running server, a client of its API, and an admin's headers."""

    base_url: str
    client: httpx.Client
    secret: str
    database: str = ""
    """The server's database URL (a test may alter rows there, as an attacker with SQL would)."""

    def headers(self, tenant: str = TENANT, role: str = "admin") -> dict[str, str]:
        token = mint_token(self.secret, tenant=tenant, roles=[role], subject="admin@example.com")
        return {"Authorization": f"Bearer {token}"}

    def key(self, role: str, tenant: str = TENANT) -> str:
        body = {"name": f"{role} in the browser", "role": role}
        made = self.client.post("/v1/api-keys", json=body, headers=self.headers(tenant))
        assert made.status_code == 201, made.text
        return str(made.json()["key"])


@contextmanager
def console_server(postgres_url: str, template: str, **changes: Any) -> Iterator[Console]:
    """A server on its own database whose console cookies travel over loopback HTTP.

    ``changes`` are further settings (a test's webhook retries, say).
    """
    name = f"ecp_console_{os.getpid()}_{next(_names)}"
    database = create_database(postgres_url, name, template=template)
    secret = secrets.token_urlsafe(32)
    fields: dict[str, Any] = {
        "audit_signing_key": base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        "dispatch_poll_seconds": 0.05,
        "insecure_cookies": True,
        **changes,
    }
    settings = Settings(database_url=database, jwt_secret=secret, **fields)
    try:
        with serving(lambda _: settings) as (base_url, client, _):
            yield Console(base_url=base_url, client=client, secret=secret, database=database)
    finally:
        drop_database(postgres_url, name)


@pytest.fixture(scope="module")
def console(postgres_url: str, migrated_template: str, browser: WebDriver) -> Iterator[Console]:
    """One served console per browser test module (cookies over loopback HTTP).

    The browser leaves the console before the server stops: a page's live stream is an open
    request, which a graceful shutdown waits for.
    """
    with console_server(postgres_url, migrated_template) as served:
        yield served
        browser.get("about:blank")


def until(browser: WebDriver, condition: Callable[[], object]) -> None:
    """Wait (up to 30 s) until ``condition`` is truthy."""
    WebDriverWait(browser, 30).until(lambda _: condition())


def fits(browser: WebDriver) -> None:
    """No sideways scroll: the document is no wider than the window's viewport."""
    scroll, inner = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth];"
    )
    assert int(scroll) <= int(inner), f"{browser.current_url} scrolls sideways"


def shot(browser: WebDriver, name: str) -> None:
    """Screenshots at both widths, no sideways scroll, no serious accessibility violation."""
    capture(browser, f"console-{name}")
    fits(browser)
    assert serious_violations(browser) == [], name


def whole(browser: WebDriver, name: str, width: int = 1280) -> None:
    """The whole page, top to bottom, at ``width`` (for docs/console.md)."""
    browser.set_window_size(width, HEIGHT)
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(width, int(height) + 140)  # the window's frame takes some height
    browser.save_screenshot(str(SCREENS / f"console-{name}-whole-{width}.png"))
    browser.set_window_size(width, HEIGHT)


def sign_in(browser: WebDriver, console: Console, key: str) -> None:
    """Sign in with ``key`` in a fresh browser session; wait for the landing section."""
    browser.delete_all_cookies()
    browser.get(console.base_url + "/console/sign-in")
    browser.find_element(By.ID, "credential").send_keys(key)
    browser.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    until(browser, lambda: "/console/sign-in" not in browser.current_url)


__all__ = [
    "TENANT",
    "WAIT",
    "Console",
    "console_server",
    "fits",
    "shot",
    "sign_in",
    "until",
    "whole",
]
