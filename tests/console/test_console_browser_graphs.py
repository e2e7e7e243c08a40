"""Deployments, graphs and the drawings in Chromium, against a real server on PostgreSQL.

An operator opens the deployments list, a deployment whose graph branches and loops (drawn, with
its policy and versions), zooms the drawing with the script's buttons, pauses the deployment with
its form, opens an older version of the graph, and the approval page of a run that took a branch
and waits. Every page is saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``), the
deployment page in the dark scheme too; none scrolls sideways, and axe-core finds no serious or
critical violation on any.
"""

from typing import Any

import pytest
from selenium.webdriver.common.by import By
from tests.support.console_browser import WAIT, shot, sign_in, until, whole

pytestmark = pytest.mark.e2e

SET = {"operation": "constant", "target_path": "checked", "value": True}


def orders(extra: bool) -> dict[str, Any]:
    """A graph that branches (pay or ask again) and loops back to its check."""
    check = "check-the-customer-credit-limit"
    nodes: list[dict[str, Any]] = [
        {"id": check, "kind": "mapping", "operations": [SET]},
        {
            "id": "pay-the-supplier",
            "kind": "action",
            "action": {
                "name": "set",
                "fingerprint": "set/1",
                "arguments": {"values": {"paid": True}},
                "capability_refs": ["network_write"],
            },
        },
        {"id": "ask-again", "kind": "interrupt", "target_path": "answer", "prompt": "Why?"},
        {"id": "notify", "kind": "mapping", "operations": [SET]},
        {"id": "done", "kind": "end"},
    ]
    edges: list[dict[str, Any]] = [
        {"source": check, "target": "pay-the-supplier", "condition": {"expression": "state.ok"}},
        {"source": check, "target": "ask-again", "condition": {"expression": "!state.ok"}},
        {
            "source": "ask-again",
            "target": check,
            "condition": {"expression": "true", "allow_cycle_traversal": True},
        },
        {"source": "pay-the-supplier", "target": "notify"},
        {"source": "notify", "target": "done"},
    ]
    if extra:
        nodes.append({"id": "audit-trail", "kind": "end"})
        edges.append(
            {"source": check, "target": "audit-trail", "condition": {"expression": "false"}}
        )
    return {"graph_id": "orders", "entry": check, "nodes": nodes, "edges": edges}


def expenses() -> dict[str, Any]:
    """``classify`` → ``review`` (an approval) when big, else ``auto``; both → ``done``."""
    return {
        "graph_id": "expenses",
        "entry": "classify",
        "nodes": [
            {
                "id": "classify",
                "kind": "mapping",
                "operations": [{"operation": "constant", "target_path": "big", "value": True}],
            },
            {
                "id": "review",
                "kind": "approval",
                "summary": "Approve the expense",
                "rationale": "Expenses over 500 EUR need a person",
            },
            {"id": "auto", "kind": "mapping", "operations": [SET]},
            {"id": "done", "kind": "end"},
        ],
        "edges": [
            {"source": "classify", "target": "review", "condition": {"expression": "state.big"}},
            {"source": "classify", "target": "auto", "condition": {"expression": "!state.big"}},
            {"source": "review", "target": "done"},
            {"source": "auto", "target": "done"},
        ],
    }


def _setup(console) -> str:
    """The graphs and deployments; a run of ``expenses`` waiting at ``review``: its approval."""
    admin, api = console.headers(), console.client
    for graph in (orders(extra=False), orders(extra=True), expenses()):
        assert api.post("/v1/graphs", json=graph, headers=admin).status_code == 201
    for body in (
        {"deployment_ref": "orders", "graph_id": "orders", "graph_version": 1},
        {"deployment_ref": "orders-eu", "graph_id": "orders", "max_concurrent_runs": 5},
        {"deployment_ref": "expenses", "graph_id": "expenses"},
    ):
        assert api.post("/v1/deployments", json=body, headers=admin).status_code == 201
    policy = {"deny_capabilities": ["network_write"]}
    assert api.put("/v1/deployments/orders/policy", json=policy, headers=admin).is_success
    assert api.post("/v1/deployments/orders-eu/pause", headers=admin).is_success
    body = {"deployment_ref": "expenses", "input": {"amount": 900}}
    run = api.post("/runs", json=body, headers={**admin, **WAIT}).json()
    assert run["status"] == "waiting_approval", run
    return str(run["pending_approval_ids"][0])


@pytest.mark.spec("C15 console-deployments", "C15 console-drawing")
def test_an_operator_reads_deployments_zooms_a_drawing_and_pauses_in_the_browser(console, browser):
    approval_id = _setup(console)
    sign_in(browser, console, console.key("operator"))
    browser.get(console.base_url + "/console/deployments")
    until(browser, lambda: browser.find_elements(By.LINK_TEXT, "orders-eu"))
    rows = browser.find_element(By.CSS_SELECTOR, "table.rows").text
    assert "paused" in rows and "5 at once" in rows and "denies network_write" in rows
    shot(browser, "deployments")

    browser.find_element(By.LINK_TEXT, "orders").click()
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".drawing svg"))
    svg = browser.find_element(By.CSS_SELECTOR, ".drawing svg")
    labels = [t.text for t in svg.find_elements(By.CSS_SELECTOR, "text.node-label")]
    assert "check-the-customer-…" in labels and "done" in labels
    assert len(svg.find_elements(By.CSS_SELECTOR, "g.edge.back")) == 1
    assert (
        "pay-the-supplier"
        in browser.find_element(By.ID, "policy").find_element(By.XPATH, "..").text
    )
    shot(browser, "deployment")
    whole(browser, "deployment")
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    shot(browser, "deployment-dark")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    before = float(svg.get_attribute("width") or 0)
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Zoom in']").click()
    until(browser, lambda: float(svg.get_attribute("width") or 0) > before)
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Zoom out']").click()
    until(browser, lambda: abs(float(svg.get_attribute("width") or 0) - before) < 1)

    browser.find_element(By.ID, "pause-reason").send_keys("supplier incident")
    browser.find_element(By.XPATH, "//button[normalize-space()='Pause the deployment']").click()
    until(
        browser,
        lambda: browser.find_elements(
            By.XPATH, "//button[normalize-space()='Unpause the deployment']"
        ),
    )
    assert console.client.get("/v1/deployments/orders", headers=console.headers()).json()["paused"]
    shot(browser, "deployment-paused")

    browser.find_element(By.LINK_TEXT, "v2").click()
    until(browser, lambda: "version=2" in browser.current_url)
    assert browser.find_elements(By.CSS_SELECTOR, "g.node[data-node='audit-trail']")
    shot(browser, "graph")

    browser.get(console.base_url + f"/console/approvals/{approval_id}")
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".drawing svg"))
    here = browser.find_element(By.CSS_SELECTOR, "g.node.state-here")
    assert here.get_attribute("data-node") == "review"
    taken = browser.find_elements(By.CSS_SELECTOR, "g.edge.taken")
    assert [(e.get_attribute("data-source"), e.get_attribute("data-target")) for e in taken] == [
        ("classify", "review")
    ]
    browser.execute_script("document.getElementById('graph').scrollIntoView();")
    shot(browser, "approval-drawing")
    whole(browser, "approval-drawing")
