"""The ``console`` fixture: one served console per browser test module."""

from collections.abc import Iterator

import pytest
from selenium.webdriver.remote.webdriver import WebDriver
from tests.support.console_browser import Console, console_server


@pytest.fixture(scope="module")
def console(postgres_url: str, migrated_template: str, browser: WebDriver) -> Iterator[Console]:
    """A server on its own database whose console cookies travel over loopback HTTP.

    The browser leaves the console before the server stops: a page's live stream is an open
    request, which a graceful shutdown waits for.
    """
    with console_server(postgres_url, migrated_template) as served:
        yield served
        browser.get("about:blank")
