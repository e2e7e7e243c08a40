"""A real browser for page tests: Debian's headless Chromium, driven through its ChromeDriver.

``make test`` installs both (the ``browser`` target); ``tests/support/e2e_server.py`` offers the fixture. Each page a test visits can be saved as a
screenshot at the phone and desktop widths the pages must read well at (390 and 1280 px), under
``test-artifacts/screens/`` (kept by CI as test artifacts, ignored by git).
"""

import pathlib
import shutil
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

WIDTHS = (390, 1280)
"""The widths every page is read at: a phone and a desktop."""
HEIGHT = 900
SCREENS = pathlib.Path(__file__).parents[2] / "test-artifacts" / "screens"


def start_chromium(*arguments: str) -> webdriver.Chrome:
    """A headless Chromium with ``arguments`` added, its console kept for ``get_log("browser")``.

    Fails, saying what to run, when Chromium or its driver is missing.
    """
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail("Debian's chromium and chromium-driver are needed: run `make browser`")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    for argument in arguments:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    chrome.set_page_load_timeout(30)
    return chrome


@pytest.fixture(scope="session")
def browser() -> Iterator[webdriver.Chrome]:
    """One headless Chromium for the session."""
    chrome = start_chromium()
    try:
        yield chrome
    finally:
        chrome.quit()


def fits(chrome: webdriver.Chrome, width: int) -> bool:
    """Whether the page needs no sideways scrolling in a window ``width`` px wide."""
    scroll, client = chrome.execute_script(
        "const e = document.documentElement; return [e.scrollWidth, e.clientWidth];"
    )
    return int(scroll) <= int(client) <= width


def capture(chrome: webdriver.Chrome, name: str) -> list[pathlib.Path]:
    """Save the current page at each of :data:`WIDTHS`; assert it fits each width."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    saved = []
    for width in WIDTHS:
        chrome.set_window_size(width, HEIGHT)
        assert fits(chrome, width), f"{name} scrolls sideways at {width} px"
        path = SCREENS / f"{name}-{width}.png"
        chrome.save_screenshot(str(path))
        saved.append(path)
    return saved
