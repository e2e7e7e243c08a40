"""Operations in the console, in headless Chromium against a real server on PostgreSQL (ADR 0084).

An admin reads the task queues by topic and one topic's tasks, then the webhooks page with a
failing endpoint's dead letter, replays it and sees the replay delivered. An approver's inbox,
left open, shows a new approval without a reload (the live stream and ``live.js``). Every page
is saved at 390 and 1280 px (``test-artifacts/screens/console-*.png``); none scrolls sideways and
axe-core finds no serious or critical violation.
"""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from tests.support.console import reviewed
from tests.support.console_browser import WAIT, Console, console_server, shot, sign_in, until, whole
from tests.support.receiver import receiver

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def ops(postgres_url: str, migrated_template: str, browser: WebDriver) -> Iterator[Console]:
    """A console whose webhooks give up after one attempt and may post to loopback."""
    with console_server(
        postgres_url,
        migrated_template,
        webhook_allow_private_targets=True,
        webhook_max_attempts=1,
        webhook_poll_seconds=0.1,
    ) as served:
        yield served
        browser.get("about:blank")  # the live stream closes before the server stops


def task_graph(ref: str, topic: str) -> dict[str, Any]:
    action = {
        "name": topic,
        "fingerprint": "sha256:" + topic,
        "arguments": {},
        "side_effect": "idempotent",
    }
    return {
        "graph_id": ref,
        "entry": "work",
        "nodes": [{"id": "work", "kind": "task", "action": action}, {"id": "done", "kind": "end"}],
        "edges": [{"source": "work", "target": "done"}],
    }


def deploy(ops: Console, graph: dict[str, Any]) -> None:
    admin = ops.headers()
    assert ops.client.post("/v1/graphs", json=graph, headers=admin).status_code == 201
    body = {"deployment_ref": graph["graph_id"], "graph_id": graph["graph_id"]}
    assert ops.client.post("/v1/deployments", json=body, headers=admin).status_code == 201


def start(ops: Console, ref: str) -> dict[str, Any]:
    body = {"deployment_ref": ref, "input": {"order": 42}}
    run = ops.client.post("/runs", json=body, headers={**ops.headers(), **WAIT})
    assert run.status_code == 201, run.text
    return dict(run.json())


@pytest.mark.spec("C15 console-ops-browser", "C15 console-tasks", "C15 console-webhooks")
def test_task_queues_and_a_dead_letter_replayed_in_the_browser(ops, browser):
    api, admin = ops.client, ops.headers()
    for ref, topic in (
        ("charges", "payments.charge"),
        ("shipping", "warehouse.ship"),
        ("mail", "mail.send"),
    ):
        deploy(ops, task_graph(ref, topic))
    for ref, count in (("charges", 4), ("shipping", 2), ("mail", 1)):
        for _ in range(count):
            start(ops, ref)
    claim = {
        "worker_id": "worker-eu-1",
        "topics": ["payments.charge"],
        "lock_seconds": 900,
        "max_tasks": 2,
    }
    assert len(api.post("/v1/tasks/claim", json=claim, headers=admin).json()["tasks"]) == 2

    with receiver(default=500) as failing, receiver(default=200) as healthy:
        for ref, hook in (("charges", failing), ("shipping", healthy)):
            body = {
                "deployment_ref": ref,
                "target_url": hook.url,
                "event_types": ["run.started", "run.completed"],
            }
            assert api.post("/webhooks/subscriptions", json=body, headers=admin).status_code == 201
        start(ops, "charges")
        start(ops, "shipping")
        deadline = time.monotonic() + 20
        while not api.get("/webhooks/dead-letters", headers=admin).json()["dead_letters"]:
            assert time.monotonic() < deadline, "no dead letter"
            time.sleep(0.1)

        sign_in(browser, ops, ops.key("admin"))
        browser.get(ops.base_url + "/console/tasks")
        until(browser, lambda: browser.find_elements(By.LINK_TEXT, "payments.charge"))
        shot(browser, "tasks")
        browser.find_element(By.LINK_TEXT, "payments.charge").click()
        until(browser, lambda: "worker-eu-1" in browser.page_source)
        assert browser.page_source.count("worker-eu-1") == 2
        shot(browser, "topic")

        browser.find_element(By.LINK_TEXT, "Webhooks").click()
        until(
            browser, lambda: browser.find_elements(By.XPATH, "//button[normalize-space()='Replay']")
        )
        assert "failing" in browser.page_source and "healthy" in browser.page_source
        shot(browser, "webhooks")
        failing.default = 200
        browser.find_element(By.XPATH, "//button[normalize-space()='Replay']").click()
        until(browser, lambda: "Replay of" in browser.page_source)
        deadline = time.monotonic() + 20
        while not any(got.answered == 200 for got in failing.received):  # the replay arrived
            assert time.monotonic() < deadline, "the replay was not delivered"
            time.sleep(0.1)
        time.sleep(0.5)  # its delivery recorded
        browser.refresh()
        until(browser, lambda: "Replay of" in browser.page_source)
        shot(browser, "webhooks-replayed")
        whole(browser, "webhooks-replayed")


@pytest.mark.spec("C15 console-ops-browser", "C15 console-live")
def test_the_inbox_shows_a_new_approval_without_a_reload(ops, browser):
    deploy(ops, reviewed("live-inbox", sla_seconds=3600))
    sign_in(browser, ops, ops.key("approver"))
    browser.get(ops.base_url + "/console/inbox")
    until(
        browser,
        lambda: browser.execute_script("return document.documentElement.dataset.live") == "on",
    )
    assert "Nothing waits for you" in browser.page_source
    browser.execute_script("window.sameDocument = true;")
    time.sleep(1.0)  # the stream is open
    start(ops, "live-inbox")
    until(browser, lambda: browser.find_elements(By.LINK_TEXT, "Pay the supplier"))
    assert browser.execute_script("return window.sameDocument === true;")  # no reload
    until(browser, lambda: "Updated at" in browser.find_element(By.CSS_SELECTOR, ".live-note").text)
    shot(browser, "inbox-live")
