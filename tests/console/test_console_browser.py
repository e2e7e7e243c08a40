"""The console end to end, in Debian's headless Chromium against a real server on PostgreSQL.

An approver's API key signs in → the inbox lists the run's approval → its page shows the payload
→ the payload is edited → the diff page shows the change → it is approved → the run completes.
An approval decided elsewhere while its page is open: pressing Approve resolves nothing and says so.
An operator (who reads approvals but may not resolve them) sees it without decision forms; another tenant's session gets a 404 page.
Every page is saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``), the approval
page in the dark scheme too; none scrolls sideways, and axe-core finds no serious or critical
violation on any.
"""

import pytest
from selenium.webdriver.common.by import By
from tests.support.console import reviewed
from tests.support.console_browser import WAIT, shot, sign_in, until, whole

pytestmark = pytest.mark.e2e


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
    shot(browser, "sign-in")
    sign_in(browser, console, console.key("approver"))
    until(browser, lambda: browser.find_elements(By.LINK_TEXT, "Pay the supplier"))
    assert "due in 1 h 59 min" in browser.page_source or "due in 2 h" in browser.page_source
    shot(browser, "inbox")

    browser.find_element(By.LINK_TEXT, "Pay the supplier").click()
    until(browser, lambda: browser.find_elements(By.ID, "edited_payload"))
    assert "INV-0042" in browser.find_element(By.CSS_SELECTOR, "pre.json").text
    assert "waiting approval" in browser.find_element(By.CSS_SELECTOR, "ol.timeline").text
    here = (
        browser.find_element(By.CSS_SELECTOR, "ol.graph li.node-here").get_attribute("textContent")
        or ""
    )
    assert "review" in here and "waits here" in here
    shot(browser, "approval")
    whole(browser, "approval")
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    shot(browser, "approval-dark")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    editor = browser.find_element(By.ID, "edited_payload")
    editor.clear()
    edited = '{"supplier": "ACME Tools", "amount": 900, "currency": "EUR", "invoice": "INV-0042"}'
    editor.send_keys(edited)
    browser.find_element(By.ID, "edit-reason").send_keys("Capped at the contract price")
    browser.find_element(By.XPATH, "//button[normalize-space()='Review the changes']").click()
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "pre.diff"))
    diff = browser.find_element(By.CSS_SELECTOR, "pre.diff").text
    assert '-  "amount": 1200,' in diff and '+  "amount": 900,' in diff
    shot(browser, "diff")
    pending = api.get(f"/v1/approvals/{approval_id}", headers=admin).json()
    assert pending["status"] == "pending"  # the diff resolved nothing

    browser.find_element(
        By.XPATH, "//button[normalize-space()='Approve with these changes']"
    ).click()
    until(browser, lambda: "edit and approve by" in browser.page_source)
    shot(browser, "resolved")
    whole(browser, "resolved")
    done = api.get(f"/runs/{run['run_id']}", headers={**admin, **WAIT}).json()
    assert done["status"] == "completed"
    resolved = api.get(f"/v1/approvals/{approval_id}", headers=admin).json()
    assert resolved["resolution"]["edited_payload"]["amount"] == 900

    # A second run's approval decided elsewhere while its page is open: Approve resolves nothing.
    second = api.post("/runs", json=body, headers={**admin, **WAIT}).json()
    (other_id,) = second["pending_approval_ids"]
    browser.get(console.base_url + f"/console/approvals/{other_id}")
    until(browser, lambda: browser.find_elements(By.XPATH, "//button[normalize-space()='Approve']"))
    elsewhere = {"decision": "reject", "reason": "Duplicate invoice"}
    resolve = f"/deployments/pay-browser/approvals/{other_id}/resolve"
    assert api.post(resolve, json=elsewhere, headers=admin).status_code == 200
    browser.find_element(By.XPATH, "//button[normalize-space()='Approve']").click()
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "p.alert"))
    assert "Nothing was resolved" in browser.find_element(By.CSS_SELECTOR, "p.alert").text
    assert "reject by admin@example.com" in browser.page_source
    shot(browser, "stale")

    sign_in(browser, console, console.key("operator"))  # reads approvals, may not resolve
    browser.get(console.base_url + f"/console/approvals/{approval_id}")
    assert "Pay the supplier" in browser.find_element(By.TAG_NAME, "h1").text
    assert browser.find_elements(By.CSS_SELECTOR, "form[action$='/resolve']") == []
    assert browser.find_elements(By.CSS_SELECTOR, "form[action$='/edit']") == []
    shot(browser, "approval-reader")

    sign_in(browser, console, console.key("approver", tenant="console-elsewhere"))
    browser.get(console.base_url + f"/console/approvals/{approval_id}")
    assert "Not found" in browser.find_element(By.TAG_NAME, "h1").text
    assert "Pay the supplier" not in browser.page_source
    shot(browser, "not-found")
