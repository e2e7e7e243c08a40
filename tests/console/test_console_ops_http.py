"""The console's task queues and webhooks over HTTP on the memory store (ADR 0084).

Each rule alone through the app's routes: who may see each page (the API's permissions), what a
page shows and never shows (a webhook's secret, a task's arguments), filters and keyset pages,
another tenant's rows, and Replay of a dead letter behind its CSRF form.
"""

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support.console import Person, api_key, bearer, console_client, field, signed_in
from tests.support.receiver import Receiver, receiver

from ecp_http.server.console.tasks import TASKS_PAGE
from ecp_http.server.console.webhooks import DELIVERIES_PAGE
from ecp_http.server.console_sessions import CONSOLE_COOKIE

pytestmark = pytest.mark.integration

TENANT = "console-ops"
OTHER = "console-ops-other"
ADMIN = bearer(TENANT, "admin")
TASKS = "C15 console-tasks"
WEBHOOKS = "C15 console-webhooks"
SECRET_TEXT = "never-shown-signing-secret-0123456789"
WAIT = {"Prefer": "wait=10"}


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiver(default=500) as answering:
        yield answering


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client(
        webhook_allow_private_targets=True,
        webhook_max_attempts=1,
        webhook_poll_seconds=0.05,
        dispatch_poll_seconds=0.02,
    )


def task_graph(ref: str, topic: str) -> dict[str, Any]:
    """``work`` (a task node of ``topic``) → ``done``."""
    action = {
        "name": topic,
        "fingerprint": "sha256:work",
        "arguments": {"card": "4111-secret-argument"},
        "side_effect": "idempotent",
    }
    return {
        "graph_id": ref,
        "entry": "work",
        "nodes": [
            {"id": "work", "kind": "task", "action": action},
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "work", "target": "done"}],
    }


def deploy(client: TestClient, ref: str, topic: str, admin: dict[str, str] = ADMIN) -> None:
    assert client.post("/v1/graphs", json=task_graph(ref, topic), headers=admin).status_code == 201
    body = {"deployment_ref": ref, "graph_id": ref}
    assert client.post("/v1/deployments", json=body, headers=admin).status_code == 201


def start(client: TestClient, ref: str, admin: dict[str, str] = ADMIN) -> str:
    body = {"deployment_ref": ref, "input": {}}
    run = client.post("/runs", json=body, headers={**admin, **WAIT}).json()
    assert run["status"] == "waiting_task", run
    return str(run["run_id"])


def claim(client: TestClient, topic: str, worker: str = "worker-7") -> dict[str, Any]:
    body = {"worker_id": worker, "topics": [topic], "lock_seconds": 600}
    (task,) = client.post("/v1/tasks/claim", json=body, headers=ADMIN).json()["tasks"]
    return dict(task)


def person(client: TestClient, role: str, admin: dict[str, str] = ADMIN) -> Person:
    return signed_in(client, api_key(client, admin, role)[0])


@pytest.mark.spec(TASKS)
def test_the_task_overview_counts_each_topics_open_tasks(client):
    deploy(client, "charges", "charge")
    deploy(client, "shipping", "ship")
    runs = [start(client, "charges") for _ in range(3)]
    start(client, "shipping")
    claimed = claim(client, "charge")
    operator = person(client, "operator")
    page = operator.get("/console/tasks")
    assert page.status_code == 200
    rows = re.findall(r'<tr>\s*<td data-label="Topic">(.*?)</tr>', page.text, re.DOTALL)
    assert [re.search(r">([a-z]+)</a>", row).group(1) for row in rows] == ["charge", "ship"]
    numbers = [re.findall(r'class="num">(?:<span[^>]*>)?(\d+)', row) for row in rows]
    assert numbers == [["2", "1", "0"], ["1", "0", "0"]]
    topic = operator.get("/console/tasks", topic="charge")
    assert topic.status_code == 200
    assert claimed["task_id"] in topic.text and "worker-7" in topic.text
    assert all(f"/console/runs/{run}" in topic.text for run in runs)
    assert "1 of 3" in topic.text and "0 of 3" in topic.text
    assert "4111-secret-argument" not in topic.text + page.text
    assert claimed["lock_token"] not in topic.text
    locked = operator.get("/console/tasks", topic="charge", status="locked").text
    assert claimed["task_id"] in locked and locked.count("/console/runs/") == 1


@pytest.mark.spec(TASKS)
def test_the_task_pages_follow_the_apis_role_and_tenant(client):
    deploy(client, "charges", "charge")
    start(client, "charges")
    other_admin = bearer(OTHER, "admin")
    deploy(client, "theirs", "their-topic", other_admin)
    start(client, "theirs", other_admin)
    for role in ("approver", "viewer", "analyst"):
        assert person(client, role).get("/console/tasks").status_code == 403
    operator = person(client, "operator")
    assert "their-topic" not in operator.get("/console/tasks").text
    theirs = operator.get("/console/tasks", topic="their-topic").text
    assert "No tasks" in theirs and "/console/runs/" not in theirs
    assert operator.get("/console/tasks", status="bogus", topic="charge").status_code == 422
    assert operator.get("/console/tasks", topic="charge", cursor="forged").status_code == 422
    empty = person(client, "admin", other_admin).get("/console/tasks", topic="nothing").text
    assert "No tasks" in empty


@pytest.mark.spec(TASKS)
def test_a_topics_tasks_come_in_keyset_pages_each_task_once(client):
    deploy(client, "bulk", "bulk")
    made = {start(client, "bulk") for _ in range(TASKS_PAGE + 2)}
    operator = person(client, "operator")
    seen: list[str] = []
    page = operator.get("/console/tasks", topic="bulk").text
    while True:
        seen += re.findall(r'href="/console/runs/([^"]+)"', page)
        more = re.findall(r'href="(/console/tasks\?topic=bulk&amp;cursor=[^"]+)"', page)
        if not more:
            break
        page = operator.get(more[0].replace("&amp;", "&")).text
    assert sorted(seen) == sorted(made)


def dead_letter(client: TestClient, hook: Receiver, ref: str = "hooked") -> str:
    """A subscription of ``ref`` to run.started answered 500 once: its delivery's id, dead."""
    deploy(client, ref, "charge")
    body = {
        "deployment_ref": ref,
        "target_url": hook.url,
        "event_types": ["run.started"],
        "secret": SECRET_TEXT,
    }
    made = client.post("/webhooks/subscriptions", json=body, headers=ADMIN)
    assert made.status_code == 201, made.text
    start(client, ref)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        dead = client.get("/webhooks/dead-letters", headers=ADMIN).json()["dead_letters"]
        if dead:
            return str(dead[0]["delivery_id"])
        time.sleep(0.05)
    raise AssertionError("no dead letter")


@pytest.mark.spec(WEBHOOKS)
def test_the_webhooks_page_shows_health_dead_letters_and_deliveries_but_no_secret(client, hook):
    dead = dead_letter(client, hook)
    admin = person(client, "admin")
    page = admin.get("/console/webhooks")
    assert page.status_code == 200
    assert hook.url in page.text and "failing" in page.text and "HTTP 500" in page.text
    assert dead in page.text and "run.started" in page.text
    assert f'action="/console/webhooks/dead-letters/{dead}/replay"' in page.text
    assert SECRET_TEXT not in page.text and "whsec" not in page.text
    only_dead = admin.get("/console/webhooks", status="dead").text
    assert only_dead.count('<span class="badge bad">dead</span>') == 1
    assert "No deliveries pending" in admin.get("/console/webhooks", status="pending").text
    assert admin.get("/console/webhooks", status="lost").status_code == 422
    assert admin.get("/console/webhooks", cursor="forged").status_code == 422


@pytest.mark.spec(WEBHOOKS)
def test_replay_needs_its_csrf_token_and_queues_the_dead_letter_again(client, hook):
    dead = dead_letter(client, hook)
    admin = person(client, "admin")
    page = admin.get("/console/webhooks").text
    action = f"/console/webhooks/dead-letters/{dead}/replay"
    token = field(page, "csrf_token", action)
    other = person(client, "admin")
    assert admin.post(action, {}).status_code == 403
    assert (
        admin.post(
            action, {"csrf_token": field(other.get("/console/webhooks").text, "csrf_token", action)}
        ).status_code
        == 403
    )
    hook.default = 200
    replayed = admin.post(action, {"csrf_token": token})
    assert replayed.status_code == 303
    assert replayed.headers["location"] == f"/console/webhooks?replayed={dead}"
    after = admin.get(replayed.headers["location"]).text
    assert "Replay of" in after and f"{dead}.replay" in after
    assert admin.post(action, {"csrf_token": token}).status_code == 303  # the same replay again
    listed = client.get("/webhooks/dead-letters", headers=ADMIN).json()["dead_letters"]
    assert [d["delivery_id"] for d in listed] == [dead]


@pytest.mark.spec(WEBHOOKS)
def test_the_webhooks_page_follows_the_apis_role_and_tenant(client, hook):
    dead = dead_letter(client, hook)
    for role in ("operator", "approver", "viewer", "analyst"):
        reader = person(client, role)
        assert reader.get("/console/webhooks").status_code == 403
        replay = reader.post(f"/console/webhooks/dead-letters/{dead}/replay", {"csrf_token": "x"})
        assert replay.status_code == 403
    stranger = person(client, "admin", bearer(OTHER, "admin"))
    theirs = stranger.get("/console/webhooks").text
    assert dead not in theirs and hook.url not in theirs and "No webhook subscriptions" in theirs
    assert "/replay" not in theirs
    sessions = client.app.state.runtime.services.console
    session = sessions.session({"cookie": f"{CONSOLE_COOKIE}={stranger.cookies[CONSOLE_COOKIE]}"})
    token = sessions.csrf(session, f"replay:{dead}")  # the stranger's own, valid token
    action = f"/console/webhooks/dead-letters/{dead}/replay"
    assert stranger.post(action, {"csrf_token": token}).status_code == 404
    assert (
        client.get(f"/webhooks/dead-letters/{dead}", headers=ADMIN).json()["delivery"]["status"]
        == "dead"
    )
    assert (
        client.get("/webhooks/dead-letters", headers=ADMIN).json()["dead_letters"][0]["delivery_id"]
        == dead
    )


@pytest.mark.spec(WEBHOOKS)
def test_deliveries_come_in_keyset_pages_each_once(client, hook):
    hook.default = 200
    deploy(client, "many", "charge")
    body = {"deployment_ref": "many", "target_url": hook.url, "event_types": ["run.started"]}
    assert client.post("/webhooks/subscriptions", json=body, headers=ADMIN).status_code == 201
    for _ in range(DELIVERIES_PAGE + 2):
        start(client, "many")
    admin = person(client, "admin")
    seen: list[str] = []
    page = admin.get("/console/webhooks").text
    while True:
        section = page[page.find('id="deliveries"') :]
        seen += re.findall(
            r'<td data-label="Event"><span class="strong">run.started</span><span class="sub"><code>([^<]+)</code>',
            section,
        )
        more = re.findall(r'href="(/console/webhooks\?cursor=[^"#]+)', section)
        if not more:
            break
        page = admin.get(more[0].replace("&amp;", "&")).text
    assert len(seen) == DELIVERIES_PAGE + 2 == len(set(seen))


@pytest.mark.spec("C15 console-csp", "C15 console-live")
def test_the_live_script_is_a_file_the_wheel_ships_under_the_consoles_policy(client):
    script = client.get("/console/static/live.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert script.headers["content-security-policy"].startswith("default-src 'none'")
    assert "EventSource" in script.text and "/console/events" in script.text
    page = person(client, "approver").get("/console/inbox").text
    assert '<script src="/console/static/live.js" defer></script>' in page
    assert "<script" not in person(client, "approver").get("/console/sign-in").text
