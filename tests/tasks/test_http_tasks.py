"""External tasks over HTTP, on the memory store: the worker API, the role, the run it moves.

Node kind ``task``; ``POST /v1/tasks/claim`` (long-poll included), ``/heartbeat``, ``/complete``
(idempotent, 409 ``lock_lost``), ``/fail`` (``max_attempts``, ``task_failed``); ``GET /v1/tasks``
for operators; one audit record per attempt naming its worker.
"""

import base64
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "t" * 40
SEED = base64.b64encode(bytes(range(9, 41))).decode("ascii")
RULE = "C10 external-tasks"


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def task_graph(graph_id: str, topic: str, **task: Any) -> dict[str, Any]:
    """start → a task node of ``topic`` (with ``task``'s settings) → end."""
    return {
        "graph_id": graph_id,
        "entry": "work",
        "nodes": [
            {
                "id": "work",
                "kind": "task",
                "action": {
                    "name": topic,
                    "fingerprint": "sha256:work",
                    "arguments": {"amount": "12.50"},
                    "side_effect": "idempotent",
                },
                **task,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "work", "target": "done"}],
    }


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


def deploy(client: TestClient, ref: str, topic: str, tenant: str = "acme", **task: Any) -> None:
    graph = client.post(
        "/v1/graphs", json=task_graph(ref, topic, **task), headers=auth(tenant=tenant)
    )
    assert graph.status_code == 201, graph.text
    body = {"deployment_ref": ref, "graph_id": ref}
    answer = client.post("/v1/deployments", json=body, headers=auth(tenant=tenant))
    assert answer.status_code == 201, answer.text


def start(client: TestClient, ref: str, tenant: str = "acme") -> dict[str, Any]:
    answer = client.post(
        "/runs",
        json={"deployment_ref": ref, "input": {"customer": "c-1"}},
        headers={**auth(tenant=tenant), "Prefer": "wait=30"},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def claim(client: TestClient, topic: str, worker: str = "w1", tenant: str = "acme", **more: Any):
    body = {"worker_id": worker, "topics": [topic], **more}
    return client.post("/v1/tasks/claim", json=body, headers=auth("worker", tenant))


def timeline(client: TestClient, run_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/runs/{run_id}/timeline", headers=auth())
    assert answer.status_code == 200, answer.text
    return answer.json()["entries"]


def settled(client: TestClient, run_id: str) -> dict[str, Any]:
    for _ in range(500):
        run = client.get(f"/runs/{run_id}", headers=auth()).json()
        if run["status"] not in ("pending", "running"):
            return run
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} did not settle")


@pytest.mark.spec(RULE)
def test_a_claimed_task_completes_once_and_its_run_moves_on(client):
    deploy(client, "pay", "payments.charge")
    run = start(client, "pay")
    assert run["status"] == "waiting_task"
    claimed = claim(client, "payments.charge").json()["tasks"]
    assert len(claimed) == 1
    task = claimed[0]
    assert task["run_id"] == run["run_id"]
    assert task["arguments"] == {"amount": "12.50"}
    assert task["state"] == {"customer": "c-1"}
    assert task["attempt"] == 1
    body = {"lock_token": task["lock_token"], "output": {"charge_id": "ch-1"}}
    first = client.post(f"/v1/tasks/{task['task_id']}/complete", json=body, headers=auth("worker"))
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "completed"
    again = client.post(f"/v1/tasks/{task['task_id']}/complete", json=body, headers=auth("worker"))
    assert again.status_code == 200
    done = settled(client, run["run_id"])
    assert done["status"] == "completed"
    assert done["output"] == {"customer": "c-1", "charge_id": "ch-1"}
    records = [r for r in timeline(client, run["run_id"]) if r["node_id"] == "work"]
    assert [r["status"] for r in records] == ["succeeded"]
    assert records[0]["execution_metadata"]["worker_id"] == "w1"
    assert records[0]["execution_metadata"]["task_id"] == task["task_id"]


@pytest.mark.spec(RULE)
def test_a_lock_that_ran_out_goes_to_the_next_worker_and_the_first_gets_lock_lost(client):
    deploy(client, "ship", "shipping.book", lock_seconds=1)
    run = start(client, "ship")
    first = claim(client, "shipping.book", "w-first").json()["tasks"][0]
    assert claim(client, "shipping.book", "w-second").json()["tasks"] == []  # still held
    time.sleep(1.1)
    second = claim(client, "shipping.book", "w-second").json()["tasks"][0]
    assert second["task_id"] == first["task_id"]
    assert second["attempt"] == 2
    assert second["lock_token"] != first["lock_token"]
    late = client.post(
        f"/v1/tasks/{first['task_id']}/complete",
        json={"lock_token": first["lock_token"], "output": {"booked": "late"}},
        headers=auth("worker"),
    )
    assert late.status_code == 409
    assert late.json()["code"] == "lock_lost"
    beat = client.post(
        f"/v1/tasks/{first['task_id']}/heartbeat",
        json={"lock_token": first["lock_token"]},
        headers=auth("worker"),
    )
    assert beat.status_code == 409
    done = client.post(
        f"/v1/tasks/{second['task_id']}/complete",
        json={"lock_token": second["lock_token"], "output": {"booked": "yes"}},
        headers=auth("worker"),
    )
    assert done.status_code == 200, done.text
    assert settled(client, run["run_id"])["output"]["booked"] == "yes"
    records = [r for r in timeline(client, run["run_id"]) if r["node_id"] == "work"]
    assert [(r["status"], r["execution_metadata"]["worker_id"]) for r in records] == [
        ("failed", "w-first"),
        ("succeeded", "w-second"),
    ]
    assert records[0]["error"]["type"] == "LockExpired"


@pytest.mark.spec(RULE)
def test_the_last_failed_attempt_fails_the_run_with_task_failed(client):
    deploy(client, "mail", "mail.send", max_attempts=2)
    run = start(client, "mail")
    for attempt in (1, 2):
        task = claim(client, "mail.send").json()["tasks"][0]
        assert task["attempt"] == attempt
        failed = client.post(
            f"/v1/tasks/{task['task_id']}/fail",
            json={"lock_token": task["lock_token"], "error": f"smtp down ({attempt})"},
            headers=auth("worker"),
        )
        assert failed.status_code == 200, failed.text
    assert failed.json()["status"] == "failed"
    ended = settled(client, run["run_id"])
    assert ended["status"] == "failed"
    assert ended["failure_state"]["reason"] == "task_failed"
    records = [r for r in timeline(client, run["run_id"]) if r["node_id"] == "work"]
    assert [r["status"] for r in records] == ["failed", "failed"]
    assert records[-1]["error"] == {"type": "TaskFailed", "message": "smtp down (2)"}
    assert claim(client, "mail.send").json()["tasks"] == []


@pytest.mark.spec(RULE)
def test_a_failed_attempt_waits_its_retry_before_the_next_claim(client):
    deploy(client, "sms", "sms.send")
    start(client, "sms")
    task = claim(client, "sms.send").json()["tasks"][0]
    body = {"lock_token": task["lock_token"], "error": "rate limited", "retry_after_seconds": 3600}
    assert (
        client.post(
            f"/v1/tasks/{task['task_id']}/fail", json=body, headers=auth("worker")
        ).status_code
        == 200
    )
    repeat = client.post(f"/v1/tasks/{task['task_id']}/fail", json=body, headers=auth("worker"))
    assert repeat.status_code == 200  # the same failure again changes nothing
    assert claim(client, "sms.send").json()["tasks"] == []
    listed = client.get("/v1/tasks?topic=sms.send", headers=auth("operator")).json()["tasks"]
    assert [(t["status"], t["attempt"], t["error"]) for t in listed] == [
        ("waiting", 1, "rate limited")
    ]


@pytest.mark.spec(RULE)
def test_a_long_poll_answers_with_a_task_offered_while_it_waits(client):
    deploy(client, "poll", "poll.work")
    answers: list[Any] = []
    waiting = threading.Thread(
        target=lambda: answers.append(claim(client, "poll.work", wait_seconds=20))
    )
    waiting.start()
    time.sleep(0.3)
    run = start(client, "poll")
    waiting.join(30)
    assert answers[0].status_code == 200
    tasks = answers[0].json()["tasks"]
    assert [t["run_id"] for t in tasks] == [run["run_id"]]


def tasks_bell(client: TestClient) -> tuple[float, float]:
    """The claims waiting on the tasks-offered bell now, and how many its rings woke, scraped."""
    text = client.get("/metrics", headers=auth()).text

    def value(family: str) -> float:
        start = f'{family}{{bell="tasks_offered"}} '
        return float(next(line for line in text.splitlines() if line.startswith(start)).split()[1])

    return value("ecp_long_polls_waiting"), value("ecp_long_poll_wakeups_total")


def eventually(condition: Any) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.spec("C10 tenant-keyed-claim-wakeups")
def test_a_waiting_claim_is_woken_by_its_own_tenants_offers_only():
    """globex's offer and its worker's failed attempt reach no acme claim; acme's offer does."""
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02)
    with TestClient(create_app(settings, storage=MemoryStore())) as fresh:
        for tenant in ("acme", "globex"):
            deploy(fresh, "keyed", "keyed.work", tenant=tenant)
        answers: list[Any] = []
        waiting = threading.Thread(
            target=lambda: answers.append(claim(fresh, "keyed.work", wait_seconds=30))
        )
        waiting.start()
        eventually(lambda: tasks_bell(fresh) == (1, 0))
        start(fresh, "keyed", tenant="globex")  # answered once the run waits: its offer rang
        other = claim(fresh, "keyed.work", tenant="globex").json()["tasks"][0]
        failed = fresh.post(
            f"/v1/tasks/{other['task_id']}/fail",
            json={"lock_token": other["lock_token"], "error": "busy"},
            headers=auth("worker", "globex"),
        )
        assert failed.json()["status"] == "waiting"  # offered again at once, to globex
        assert tasks_bell(fresh) == (1, 0)  # acme's claim was not woken: it claimed nothing
        run = start(fresh, "keyed")
        waiting.join(30)
        assert [t["run_id"] for t in answers[0].json()["tasks"]] == [run["run_id"]]
        assert tasks_bell(fresh) == (0, 1)


@pytest.mark.spec(RULE)
def test_a_long_poll_with_nothing_offered_answers_an_empty_list(client):
    answer = claim(client, "nobody.offers.this", wait_seconds=1)
    assert answer.status_code == 200
    assert answer.json() == {"tasks": []}


@pytest.mark.spec("C9 worker-role")
def test_the_worker_role_works_tasks_and_nothing_else(client):
    deploy(client, "roles", "roles.work")
    assert client.get("/v1/tasks", headers=auth("worker")).status_code == 403
    assert client.get("/v1/approvals", headers=auth("worker")).status_code == 403
    body = {"deployment_ref": "roles", "input": {}}
    assert client.post("/runs", json=body, headers=auth("worker")).status_code == 403
    assert client.get("/v1/graphs", headers=auth("worker")).status_code == 403
    for role in ("operator", "approver", "analyst", "viewer"):
        refused = claim_as(client, role)
        assert refused.status_code == 403, role
    assert client.get("/v1/tasks", headers=auth("operator")).status_code == 200
    assert client.get("/v1/tasks", headers=auth("viewer")).status_code == 403


def claim_as(client: TestClient, role: str):
    body = {"worker_id": "w", "topics": ["roles.work"]}
    return client.post("/v1/tasks/claim", json=body, headers=auth(role))


@pytest.mark.spec(RULE)
def test_tenants_never_see_or_touch_each_others_tasks(client):
    deploy(client, "iso", "iso.work")
    start(client, "iso")
    assert claim(client, "iso.work", tenant="globex").json()["tasks"] == []
    task = claim(client, "iso.work").json()["tasks"][0]
    body = {"lock_token": task["lock_token"], "output": {}}
    foreign = client.post(
        f"/v1/tasks/{task['task_id']}/complete", json=body, headers=auth("worker", "globex")
    )
    assert foreign.status_code == 404
    assert (
        client.get(f"/v1/tasks/{task['task_id']}", headers=auth("admin", "globex")).status_code
        == 404
    )
    assert client.get(f"/v1/tasks/{task['task_id']}", headers=auth("operator")).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"worker_id": "w", "topics": []},
        {"worker_id": "w", "topics": ["t"], "max_tasks": 0},
        {"worker_id": "w", "topics": ["t"], "max_tasks": 101},
        {"worker_id": "w", "topics": ["t"], "wait_seconds": 31},
        {"worker_id": "w", "topics": ["t"], "lock_seconds": 0},
        {"worker_id": "", "topics": ["t"]},
        {"topics": ["t"]},
        {"worker_id": "w", "topics": ["t"], "extra": 1},
    ],
)
def test_an_invalid_claim_is_a_problem_and_claims_nothing(client, body):
    answer = client.post("/v1/tasks/claim", json=body, headers=auth("worker"))
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")


def test_an_output_that_is_not_an_object_is_refused_and_the_task_stays_locked(client):
    deploy(client, "shape", "shape.work")
    start(client, "shape")
    task = claim(client, "shape.work").json()["tasks"][0]
    bad = client.post(
        f"/v1/tasks/{task['task_id']}/complete",
        json={"lock_token": task["lock_token"], "output": [1, 2]},
        headers=auth("worker"),
    )
    assert bad.status_code == 422
    listed = client.get(f"/v1/tasks/{task['task_id']}", headers=auth("operator")).json()
    assert listed["status"] == "locked"


@pytest.mark.spec("C20 complete-claims-next")
def test_a_completion_with_claim_next_answers_the_workers_next_task(client):
    deploy(client, "queue", "queue.work")
    runs = [start(client, "queue")["run_id"] for _ in range(2)]
    task = claim(client, "queue.work", "w-next").json()["tasks"][0]
    path = f"/v1/tasks/{task['task_id']}/complete"
    body = {
        "lock_token": task["lock_token"],
        "output": {"done": 1},
        "claim_next": {"worker_id": "w-next", "topics": ["queue.work"], "max_tasks": 5},
    }
    first = client.post(path, json=body, headers=auth("worker"))
    assert first.status_code == 200, first.text
    answer = first.json()
    assert (answer["task_id"], answer["status"]) == (task["task_id"], "completed")
    (following,) = answer["next_tasks"]  # the one other task: max_tasks is at most
    assert following["run_id"] == ({*runs} - {task["run_id"]}).pop()
    assert following["lock_token"] and following["attempt"] == 1
    held = client.get(f"/v1/tasks/{following['task_id']}", headers=auth("operator")).json()
    assert (held["status"], held["worker_id"]) == ("locked", "w-next")
    again = client.post(path, json=body, headers=auth("worker"))  # a repeat claims nothing
    assert (again.status_code, again.json()["next_tasks"]) == (200, [])
    plain = {"lock_token": following["lock_token"], "output": {"done": 2}}
    last = client.post(
        f"/v1/tasks/{following['task_id']}/complete", json=plain, headers=auth("worker")
    )
    assert (last.status_code, last.json()["next_tasks"]) == (200, [])
    assert settled(client, task["run_id"])["output"] == {"customer": "c-1", "done": 1}


BAD_CLAIM_NEXT = [
    {"worker_id": "w", "topics": []},
    {"worker_id": "w", "topics": ["bad.next"], "max_tasks": 0},
    {"worker_id": "w", "topics": ["bad.next"], "wait_seconds": 1},
    {"topics": ["bad.next"]},
]


@pytest.mark.parametrize("index", range(len(BAD_CLAIM_NEXT)))
def test_an_invalid_claim_next_is_a_problem_and_completes_nothing(client, index):
    deploy(client, f"bad-next-{index}", "bad.next")
    start(client, f"bad-next-{index}")
    task = claim(client, "bad.next").json()["tasks"][0]
    body = {"lock_token": task["lock_token"], "output": {}, "claim_next": BAD_CLAIM_NEXT[index]}
    bad = client.post(f"/v1/tasks/{task['task_id']}/complete", json=body, headers=auth("worker"))
    assert bad.status_code == 422, bad.text
    assert bad.headers["content-type"].startswith("application/problem+json")
    listed = client.get(f"/v1/tasks/{task['task_id']}", headers=auth("operator")).json()
    assert listed["status"] == "locked"


@pytest.mark.spec("C10 action-plugins")
def test_task_settings_belong_to_task_nodes_and_topics_need_no_handler(client):
    graph = task_graph("settings", "no.handler.needed", lock_seconds=30, max_attempts=5)
    assert client.post("/v1/graphs", json=graph, headers=auth()).status_code == 201
    misplaced = {
        "graph_id": "misplaced",
        "entry": "a",
        "nodes": [
            {
                "id": "a",
                "kind": "action",
                "action": {"name": "echo", "fingerprint": "sha256:e"},
                "lock_seconds": 30,
            }
        ],
    }
    answer = client.post("/v1/graphs", json=misplaced, headers=auth())
    assert answer.status_code == 422
    assert ["nodes", 0, "lock_seconds"] in [e["loc"] for e in answer.json()["errors"]]
    no_action = {"graph_id": "bare", "entry": "a", "nodes": [{"id": "a", "kind": "task"}]}
    assert client.post("/v1/graphs", json=no_action, headers=auth()).status_code == 422


@pytest.mark.spec("C10 action-plugins")
def test_the_action_list_names_the_task_actions_of_the_tenants_graphs(client):
    deploy(client, "listed", "listed.topic")
    actions = client.get("/v1/actions", headers=auth()).json()["actions"]
    offered = [a for a in actions if a["name"] == "listed.topic"]
    assert offered == [
        {
            "name": "listed.topic",
            "fingerprint": "sha256:work",
            "capability_refs": [],
            "side_effect": "idempotent",
            "arguments_schema": None,
            "source": "task",
        }
    ]
    assert {"echo", "set"} <= {a["name"] for a in actions if a["source"] == "builtin"}
    foreign = client.get("/v1/actions", headers=auth(tenant="globex")).json()["actions"]
    assert "listed.topic" not in {a["name"] for a in foreign}
