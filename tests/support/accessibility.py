"""axe-core in the browser tests: the serious and critical accessibility violations of a page.

``make browser`` fetches axe-core from npm into ``test-artifacts/axe/`` (``scripts/fetch_axe.py``);
a test fails, saying what to run, when it is not there. The script is handed to Chromium through
WebDriver, not served by ECP, so the pages' Content-Security-Policy stays as it is.
"""

import pathlib
from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

AXE = pathlib.Path(__file__).parents[2] / "test-artifacts" / "axe" / "axe.min.js"
SERIOUS = ("serious", "critical")

_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]})
  .then(results => done(results.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(" ")).slice(0, 5)}))))
  .catch(error => done([{id: "axe-error", impact: "critical", help: String(error), nodes: []}]));
"""


def serious_violations(browser: WebDriver) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page the browser shows."""
    if not AXE.exists():
        pytest.fail("axe-core is needed: run `make browser` (or python scripts/fetch_axe.py)")
    browser.execute_script(AXE.read_text(encoding="utf-8"))
    browser.set_script_timeout(30)
    found = browser.execute_async_script(_RUN)
    return [violation for violation in found if violation["impact"] in SERIOUS]
