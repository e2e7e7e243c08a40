"""``/docs`` in Debian's headless Chromium with the internet out of reach (ADR 0056).

The browser's every request that is not to the loopback goes to a proxy port where nothing
listens, so a file the page tried to take from a CDN would fail to load. The page must render the
server's operations from its own files alone, with no Content-Security-Policy violation in the
browser's console, and "Try it out" must reach the server under the same policy.
"""

import socket
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait
from tests.support.browser import SCREENS, start_chromium

pytestmark = pytest.mark.e2e

WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def offline_browser() -> Iterator[webdriver.Chrome]:
    """A Chromium whose only way out of the loopback is a proxy port that refuses connections."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as dead_end:
        dead_end.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        port = dead_end.getsockname()[1]
        chrome = start_chromium(f"--proxy-server=http://127.0.0.1:{port}")
        try:
            yield chrome
        finally:
            chrome.quit()


def _console(chrome: webdriver.Chrome) -> list[str]:
    """What the console holds of errors (a failed load, a script error) or policy violations."""
    return [
        entry["message"]
        for entry in chrome.get_log("browser")
        if entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"]
    ]


def _summary_of(document: dict, tag: str) -> str:
    """The summary of the first operation tagged ``tag``, as the document gives it."""
    return next(
        operation["summary"]
        for methods in document["paths"].values()
        for operation in methods.values()
        if tag in operation.get("tags", ())
    )


@pytest.mark.spec("C1 openapi")
def test_the_reference_renders_offline_under_the_strict_policy(ecp_server, offline_browser):
    chrome = offline_browser
    with pytest.raises(WebDriverException, match="ERR_PROXY_CONNECTION_FAILED"):
        chrome.get("http://offline-check.invalid/")  # the internet is out of reach
    _console(chrome)  # drop what that attempt logged

    document = ecp_server.client.get("/openapi.json").json()
    chrome.set_window_size(1280, 900)
    chrome.get(f"{ecp_server.base_url}/docs")
    wait = WebDriverWait(chrome, WAIT_SECONDS)
    for tag in ("runs", "approvals", "graphs"):
        summary = _summary_of(document, tag)
        shown = summary.replace("`", "")  # code spans render as <code>, their text stays
        path = f"//*[contains(@class, 'opblock-summary-description') and normalize-space(.)={shown!r}]"
        assert wait.until(expected_conditions.visibility_of_element_located((By.XPATH, path)))
    operations = chrome.find_elements(By.CSS_SELECTOR, ".opblock")
    assert len(operations) == sum(len(methods) for methods in document["paths"].values())

    loaded = chrome.execute_script(
        "return performance.getEntriesByType('resource').map(entry => entry.name);"
    )
    assert f"{ecp_server.base_url}/openapi.json" in loaded
    assert all(url.startswith(f"{ecp_server.base_url}/") for url in loaded), loaded
    SCREENS.mkdir(parents=True, exist_ok=True)
    chrome.save_screenshot(str(SCREENS / "api-reference-1280.png"))
    assert _console(chrome) == []  # no CSP violation, no failed load, no script error


@pytest.mark.spec("C1 openapi")
def test_try_it_out_reaches_the_server_under_the_policy(ecp_server, offline_browser):
    chrome = offline_browser
    live = ecp_server.client.get("/openapi.json").json()["paths"]["/health/live"]["get"]
    tag, operation_id = live["tags"][0], live["operationId"]
    chrome.get(f"{ecp_server.base_url}/docs#/{tag}/{operation_id}")
    wait = WebDriverWait(chrome, WAIT_SECONDS)
    block = wait.until(
        expected_conditions.visibility_of_element_located(
            (By.ID, f"operations-{tag}-{operation_id}")
        )
    )
    if "is-open" not in (block.get_attribute("class") or ""):
        block.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
    wait.until(expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, ".try-out__btn")))
    block.find_element(By.CSS_SELECTOR, ".try-out__btn").click()
    block.find_element(By.CSS_SELECTOR, ".btn.execute").click()
    status = wait.until(
        expected_conditions.visibility_of_element_located(
            (By.CSS_SELECTOR, ".live-responses-table tbody .response-col_status")
        )
    )
    assert status.text.strip() == "200"
    assert _console(chrome) == []
