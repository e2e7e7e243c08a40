"""The console's runs end to end, in headless Chromium against a real server on PostgreSQL.

A run waits for its approval. An analyst's key sees its page but no approval link or form, and a
forged approve post from that session is 403 (nothing resolved); another tenant's session gets a
404 page. An approver finds the run in the run list, opens it, follows it to its approval, edits
the payload, sees the diff and approves; the run completes, and its page shows the timeline and
the graph with the path taken. An operator verifies the run's audit chain: verified. Every page
is saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``); none scrolls sideways,
and axe-core finds no serious or critical violation on any.
"""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from tests.support.console import reviewed
from tests.support.console_browser import WAIT, shot, sign_in, until, whole

pytestmark = pytest.mark.e2e

_FORGE = """
const form = document.createElement('form');
form.method = 'post';
form.action = arguments[0];
for (const [name, value] of Object.entries(arguments[1])) {
  const input = document.createElement('input');
  input.type = 'hidden';
  input.name = name;
  input.value = value;
  form.appendChild(input);
}
document.body.appendChild(form);
form.submit();
"""
"""A form the page never offered, posted from the signed-in browser (as a forger would)."""


def _open(browser: WebDriver, url: str, marker: str) -> None:
    browser.get(url)
    until(browser, lambda: marker in browser.page_source)


@pytest.mark.spec(
    "C15 console-runs-browser",
    "C15 console-runs",
    "C15 console-run",
    "C15 console-verify",
    "C15 console-roles",
)
def test_a_run_is_followed_approved_and_verified_in_the_browser(console, browser):
    admin = console.headers()
    api = console.client
    graph = reviewed("pay-runs", sla_seconds=7200)
    copy = {"operation": "copy", "source_path": "amount", "target_path": "requested"}
    graph["nodes"].insert(0, {"id": "check", "kind": "mapping", "operations": [copy]})
    graph["entry"] = "check"
    graph["edges"].insert(0, {"source": "check", "target": "review"})
    made = api.post("/v1/graphs", json=graph, headers=admin)
    assert made.status_code == 201, made.text
    deployment = {"deployment_ref": "pay-runs", "graph_id": "pay-runs"}
    assert api.post("/v1/deployments", json=deployment, headers=admin).status_code == 201
    payload = {"supplier": "Nordwind GmbH", "amount": 4800, "currency": "EUR"}
    body = {"deployment_ref": "pay-runs", "input": payload, "idempotency_key": "order-1187"}
    run = api.post("/runs", json=body, headers={**admin, **WAIT}).json()
    assert run["status"] == "waiting_approval", run
    run_id, (approval_id,) = run["run_id"], run["pending_approval_ids"]
    run_url = f"{console.base_url}/console/runs/{run_id}"

    # An analyst reads the run, but may not resolve its approval.
    sign_in(browser, console, console.key("analyst"))
    _open(browser, run_url, "waits here")
    assert f"/console/approvals/{approval_id}" not in browser.page_source
    assert not browser.find_elements(By.XPATH, "//button[normalize-space()='Approve']")
    assert "your role may read runs but not approvals" in browser.page_source
    shot(browser, "run-analyst")
    digest = api.get(f"/v1/approvals/{approval_id}", headers=admin).json()["action_digest"]
    forged = {"decision": "approve", "action_digest": digest, "csrf_token": "forged"}
    browser.execute_script(_FORGE, f"/console/approvals/{approval_id}/resolve", forged)
    until(browser, lambda: "Not allowed" in browser.page_source)
    assert "Status 403" in browser.page_source
    assert api.get(f"/v1/approvals/{approval_id}", headers=admin).json()["status"] == "pending"

    # Another tenant's session: the run does not exist there.
    api.post("/v1/graphs", json=reviewed("x"), headers=console.headers("elsewhere"))
    sign_in(browser, console, console.key("admin", tenant="elsewhere"))
    _open(browser, run_url, "Not found")
    assert "Status 404" in browser.page_source

    # An approver finds the run, follows it to its approval and approves an edit.
    sign_in(browser, console, console.key("approver"))
    browser.find_element(By.LINK_TEXT, "Runs").click()
    until(browser, lambda: run_id in browser.page_source)
    browser.find_element(By.ID, "find").send_keys("order-1187")
    browser.find_element(By.XPATH, "//button[normalize-space()='Filter']").click()
    until(browser, lambda: "find=order-1187" in browser.current_url)
    assert "waiting approval" in browser.find_element(By.CSS_SELECTOR, "table.rows").text
    shot(browser, "runs")
    browser.find_element(By.LINK_TEXT, run_id).click()
    until(browser, lambda: browser.find_elements(By.ID, "pending"))
    drawn = "svg.graph-drawing g.node.state-{}"
    here = browser.find_element(By.CSS_SELECTOR, drawn.format("here"))
    assert here.get_attribute("data-node") == "review" and "waits here" in here.text
    assert browser.find_element(By.CSS_SELECTOR, drawn.format("done")).text.startswith("check")
    taken = browser.find_elements(By.CSS_SELECTOR, "svg.graph-drawing g.edge.taken")
    assert [edge.get_attribute("data-target") for edge in taken] == ["review"]
    shot(browser, "run-waiting")
    whole(browser, "run-waiting")

    browser.find_element(By.LINK_TEXT, "Pay the supplier").click()
    until(browser, lambda: browser.find_elements(By.ID, "edited_payload"))
    editor = browser.find_element(By.ID, "edited_payload")
    editor.clear()
    editor.send_keys('{"supplier": "Nordwind GmbH", "amount": 4500, "currency": "EUR"}')
    browser.find_element(By.XPATH, "//button[normalize-space()='Review the changes']").click()
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "pre.diff"))
    assert '+  "amount": 4500,' in browser.find_element(By.CSS_SELECTOR, "pre.diff").text
    browser.find_element(
        By.XPATH, "//button[normalize-space()='Approve with these changes']"
    ).click()
    until(browser, lambda: "edit and approve by" in browser.page_source)
    done = api.get(f"/runs/{run_id}", headers={**admin, **WAIT}).json()
    assert done["status"] == "completed", done

    _open(browser, run_url, "completed")
    timeline = browser.find_element(By.CSS_SELECTOR, "ol.timeline").text
    assert "waiting approval" in timeline and "approved" in timeline
    passed = browser.find_elements(By.CSS_SELECTOR, "svg.graph-drawing g.node.state-done")
    assert {node.get_attribute("data-node") for node in passed} == {"check", "review", "done"}
    taken = browser.find_elements(By.CSS_SELECTOR, "svg.graph-drawing g.edge.taken")
    assert len(taken) == 2  # the whole path taken, highlighted
    assert "4500" in browser.find_element(By.ID, "payloads").find_element(By.XPATH, "..").text
    shot(browser, "run-done")
    whole(browser, "run-done")
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    shot(browser, "run-done-dark")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    # An operator verifies the run's audit chain.
    sign_in(browser, console, console.key("operator"))
    _open(browser, run_url, "Verify the chain")
    browser.find_element(By.XPATH, "//button[normalize-space()='Verify the chain']").click()
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "h2.verdict"))
    assert browser.find_element(By.CSS_SELECTOR, "h2.verdict").text == "Verified"
    expected = api.get(f"/runs/{run_id}/audit/verify", headers=admin).json()
    facts = browser.find_element(By.CSS_SELECTOR, "dl.facts").text
    assert expected["signing_key_id"] in facts and str(expected["record_count"]) in facts
    shot(browser, "verify")
