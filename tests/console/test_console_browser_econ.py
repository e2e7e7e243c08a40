"""The economics and audit pages in Debian's headless Chromium against a real server on PostgreSQL.

Evidence and a version decision are posted through the API first (:mod:`tests.support.economics`);
an analyst reads the economics page (light and dark). A viewer verifies one deployment whose chain
is whole and one whose record was altered with SQL in the server's own database. Every page is
saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``); none scrolls sideways, and
axe-core finds no serious or critical violation on any.
"""

import psycopg
import pytest
from selenium.webdriver.common.by import By
from tests.support.console import reviewed
from tests.support.console_browser import WAIT, shot, sign_in, until, whole
from tests.support.economics import seed

pytestmark = pytest.mark.e2e

BROWSER = "C15 console-browser-econ"


def _dark(browser, on: bool) -> None:
    features = [{"name": "prefers-color-scheme", "value": "dark"}] if on else []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


@pytest.mark.spec(BROWSER, "C15 console-economics", "C15 console-charts")
def test_an_analyst_reads_where_the_money_goes_and_the_decisions(console, browser):
    seed(console.client, console.headers(), workflow="claims")
    sign_in(browser, console, console.key("analyst"))
    browser.get(console.base_url + "/console/economics")
    until(browser, lambda: "Name a workflow" in browser.page_source)
    shot(browser, "economics-empty")

    browser.find_element(By.ID, "workflow").send_keys("claims")
    browser.find_element(By.XPATH, "//button[normalize-space()='Show figures']").click()
    until(browser, lambda: browser.find_elements(By.ID, "versions-head"))
    page = browser.page_source
    assert "at least $41.00000001" in page and "$50.00" in page
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart")) >= 7
    shot(browser, "economics")
    whole(browser, "economics")
    whole(browser, "economics", 390)
    _dark(browser, on=True)
    shot(browser, "economics-dark")
    whole(browser, "economics-dark")
    _dark(browser, on=False)

    browser.get(console.base_url + "/console/economics?workflow=claims&granularity=hour")
    until(browser, lambda: "Known cost by hour" in browser.page_source)
    browser.execute_script("document.getElementById('timeline-head').scrollIntoView();")
    shot(browser, "economics-hourly")


@pytest.mark.spec(BROWSER, "C15 console-audit")
def test_a_viewer_verifies_a_whole_chain_and_finds_the_altered_record(console, browser):
    admin, api = console.headers(), console.client
    runs = {}
    for ref in ("payments", "refunds"):
        assert api.post("/v1/graphs", json=reviewed(ref), headers=admin).status_code == 201
        body = {"deployment_ref": ref, "graph_id": ref}
        assert api.post("/v1/deployments", json=body, headers=admin).status_code == 201
        started = {"deployment_ref": ref, "input": {"amount": 10}}
        runs[ref] = api.post("/runs", json=started, headers={**admin, **WAIT}).json()["run_id"]
    with psycopg.connect(console.database, autocommit=True) as connection:
        altered = connection.execute(
            "UPDATE ecp_audit_records SET node_id = 'forged' WHERE audit_id = ("
            " SELECT audit_id FROM ecp_audit_records WHERE run_id = %s"
            " ORDER BY created_at LIMIT 1) RETURNING audit_id",
            (runs["refunds"],),
        ).fetchone()
    assert altered is not None

    sign_in(browser, console, console.key("viewer"))
    browser.get(console.base_url + "/console/audit")
    until(browser, lambda: browser.find_elements(By.ID, "deployments-head"))
    assert "Verifier key" in browser.page_source  # the transparency log's checkpoint and key
    shot(browser, "audit")

    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Verify payments']").click()
    until(browser, lambda: browser.find_elements(By.ID, "result-head"))
    assert "every digest recomputes and links" in browser.page_source
    shot(browser, "audit-verified")
    whole(browser, "audit-verified", 390)

    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Verify refunds']").click()
    until(browser, lambda: "verification failed" in browser.page_source)
    assert altered[0] in browser.page_source
    shot(browser, "audit-failed")
    _dark(browser, on=True)
    shot(browser, "audit-failed-dark")
    _dark(browser, on=False)
