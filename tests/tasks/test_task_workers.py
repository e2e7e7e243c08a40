"""``ecp worker`` processes on loopback against the e2e server: tasks outlive their workers.

Every worker is a real process (this venv's ``ecp`` script) running a function of
``tests/support/task_functions.py`` with a worker's credentials; the tests read what happened from
the API (run, timeline, tasks) and from each worker's JSON log lines.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.support.e2e import check, deploy, poll_until, problem, start

pytestmark = pytest.mark.e2e

ECP = pathlib.Path(sys.executable).parent / "ecp"
ROOT = pathlib.Path(__file__).parents[2]
FUNCTIONS = "tests.support.task_functions"
TOPIC = "payments.charge"
SECONDS = 60.0


def task_graph(graph_id: str, *, lock_seconds: int, max_attempts: int) -> dict[str, Any]:
    """charge (a task node of ``TOPIC``) -> done."""
    return {
        "graph_id": graph_id,
        "entry": "charge",
        "nodes": [
            {
                "id": "charge",
                "kind": "task",
                "action": {
                    "name": TOPIC,
                    "fingerprint": "sha256:" + "0" * 64,
                    "arguments": {"amount": "12.50", "currency": "EUR"},
                    "capability_refs": [],
                    "side_effect": "idempotent",
                },
                "lock_seconds": lock_seconds,
                "max_attempts": max_attempts,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "charge", "target": "done"}],
    }


@dataclass
class Workers:
    """Starts ``ecp worker`` processes against the e2e server; kills what is left at the end."""

    base_url: str
    scratch: pathlib.Path
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def markers(self) -> pathlib.Path:
        return self.scratch / "markers"

    def start(
        self, worker_id: str, function: str, credentials: dict[str, str], *options: str
    ) -> subprocess.Popen[str]:
        """``ecp worker`` as ``worker_id`` running ``function``; its log goes to a file."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ECP_")}
        env |= credentials | {"ECP_TEST_MARKERS": str(self.markers), "ECP_TEST_WORKER": worker_id}
        command = [str(ECP), "worker", "--url", self.base_url, "--topic", TOPIC]
        command += ["--worker-id", worker_id, "--wait-seconds", "1", *options]
        with (self.scratch / f"{worker_id}.log").open("w") as log:
            process = subprocess.Popen(
                [*command, f"{FUNCTIONS}:{function}"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
        self.processes.append(process)
        return process

    def claim_seen(self) -> dict[str, Any]:
        """The claim a holding function announced (the first one)."""
        deadline = time.monotonic() + SECONDS
        while not (found := sorted(self.markers.glob("*.json"))):
            assert time.monotonic() < deadline, "no worker announced a claim"
            assert all(p.poll() is None for p in self.processes), self.logs()
            time.sleep(0.05)
        return json.loads(found[0].read_text(encoding="utf-8"))

    def lines(self, worker_id: str) -> list[dict[str, Any]]:
        """The worker's JSON log lines."""
        text = (self.scratch / f"{worker_id}.log").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]

    def logs(self) -> str:
        return "\n".join(p.read_text(encoding="utf-8") for p in self.scratch.glob("*.log"))


def stopped(process: subprocess.Popen[str]) -> int:
    """SIGTERM, then the exit status."""
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=SECONDS)


@pytest.fixture
def workers(ecp_server, tmp_path) -> Iterator[Workers]:
    (tmp_path / "markers").mkdir()
    found = Workers(base_url=ecp_server.base_url, scratch=tmp_path)
    yield found
    for process in found.processes:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=SECONDS)


def charge_records(admin, run_id: str) -> list[dict[str, Any]]:
    timeline = check(admin.get(f"/runs/{run_id}/timeline"), 200)
    return [entry for entry in timeline["entries"] if entry["node_id"] == "charge"]


@pytest.mark.spec("C10 external-tasks")
def test_a_task_whose_worker_was_killed_is_completed_once_by_another(
    ecp_server, tenant, admin, workers
):
    deploy(admin, task_graph("charge-card", lock_seconds=2, max_attempts=3), "charge")
    run = start(admin, "charge")
    assert run["status"] == "waiting_task"
    key = check(admin.post("/v1/api-keys", json={"name": "worker a", "role": "worker"}), 201)
    first = workers.start("worker-a", "hold", {"ECP_API_KEY": key["key"]})
    claim = workers.claim_seen()
    assert (claim["run_id"], claim["attempt"]) == (run["run_id"], 1)
    token = {"ECP_TOKEN": ecp_server.token(tenant, "worker")}
    second = workers.start("worker-b", "charge", token)
    first.kill()  # no goodbye: its heartbeats stop and its lock runs out
    assert first.wait(timeout=SECONDS) == -signal.SIGKILL

    done = poll_until(admin, run["run_id"], {"completed", "failed"}, seconds=SECONDS)
    assert done["status"] == "completed", done
    assert done["output"]["charged"] == "12.50"  # a Decimal travels as its exact text
    assert done["output"]["charged_by"] == "worker-b"
    assert done["output"]["charged_order"] == "A-1"  # the function saw the run state

    late = admin.client.post(
        f"/v1/tasks/{claim['task_id']}/complete",
        headers={"X-API-Key": key["key"]},
        json={"lock_token": claim["lock_token"], "output": {"charged_by": "worker-a"}},
    )
    problem(late, 409, "lock_lost")
    records = charge_records(admin, run["run_id"])
    attempts = [(r["status"], r["execution_metadata"]["worker_id"]) for r in records]
    assert attempts == [("failed", "worker-a"), ("succeeded", "worker-b")]
    assert records[0]["error"]["type"] == "LockExpired"
    assert check(admin.get(f"/runs/{run['run_id']}"), 200)["output"] == done["output"]

    assert stopped(second) == 0
    events = [(line["event"], line.get("task_id")) for line in workers.lines("worker-b")]
    assert ("task claimed", claim["task_id"]) in events
    assert ("task completed", claim["task_id"]) in events
    [listed] = check(admin.get("/v1/tasks", params={"status": "completed"}), 200)["tasks"]
    assert (listed["task_id"], listed["worker_id"], listed["attempt"]) == (
        claim["task_id"],
        "worker-b",
        2,
    )


@pytest.mark.spec("C10 external-tasks")
def test_a_failing_function_fails_the_run_after_max_attempts(ecp_server, tenant, admin, workers):
    deploy(admin, task_graph("decline-card", lock_seconds=30, max_attempts=2), "decline")
    run = start(admin, "decline")
    worker = workers.start(
        "worker-c", "misbehave", {"ECP_TOKEN": ecp_server.token(tenant, "worker")}
    )

    ended = poll_until(admin, run["run_id"], {"completed", "failed"}, seconds=SECONDS)
    assert ended["status"] == "failed", ended
    assert ended["failure_state"]["reason"] == "task_failed"
    assert ended["failure_state"]["node_id"] == "charge"
    records = charge_records(admin, run["run_id"])
    assert [(r["status"], r["execution_metadata"]["worker_id"]) for r in records] == [
        ("failed", "worker-c"),
        ("failed", "worker-c"),
    ]
    errors = [r["error"]["message"] for r in records]
    assert errors == [
        "ValueError: card declined for 12.50",
        "TypeError: the function returned list, not a dict",
    ]
    assert stopped(worker) == 0
    failed = [line for line in workers.lines("worker-c") if line["event"] == "task failed"]
    assert [(line["run_id"], line["error"]) for line in failed] == [
        (run["run_id"], message) for message in errors
    ]


@pytest.mark.spec("C10 external-tasks")
def test_a_stopped_worker_finishes_its_task_and_exits_0(ecp_server, tenant, admin, workers):
    deploy(admin, task_graph("slow-card", lock_seconds=30, max_attempts=1), "slow")
    run = start(admin, "slow")
    credentials = {"ECP_TOKEN": ecp_server.token(tenant, "worker")}
    worker = workers.start("worker-d", "hold_until_released", credentials)
    claim = workers.claim_seen()
    worker.send_signal(signal.SIGTERM)  # while the function runs
    (workers.markers / f"{claim['task_id']}.release").touch()
    assert worker.wait(timeout=SECONDS) == 0, workers.logs()
    done = poll_until(admin, run["run_id"], {"completed", "failed"}, seconds=SECONDS)
    assert (done["status"], done["output"]["released"]) == ("completed", True)
    events = [line["event"] for line in workers.lines("worker-d")]
    assert events.index("task completed") < events.index("worker stopped")


CLAIMS = 'ecp_http_requests_total{method="POST",route="/v1/tasks/claim",status="200"}'


def claims_answered(admin) -> float:
    """How many claims the server has answered so far (its own counter)."""
    lines = admin.client.get("/metrics").text.splitlines()
    found = [line for line in lines if line.startswith(CLAIMS + " ")]
    return float(found[0].rsplit(" ", 1)[1]) if found else 0.0


@pytest.mark.spec("C20 complete-claims-next")
def test_a_worker_takes_its_next_tasks_from_its_completions(ecp_server, tenant, admin, workers):
    deploy(admin, task_graph("queued-card", lock_seconds=30, max_attempts=1), "queued")
    runs = [start(admin, "queued")["run_id"] for _ in range(4)]
    before = claims_answered(admin)
    worker = workers.start("worker-q", "charge", {"ECP_TOKEN": ecp_server.token(tenant, "worker")})
    for run_id in runs:
        done = poll_until(admin, run_id, {"completed", "failed"}, seconds=SECONDS)
        assert (done["status"], done["output"]["charged_by"]) == ("completed", "worker-q")
    # one claim took the first task; each completion claimed the next (a second claim may be
    # the long poll that followed the last completion); a claim per task would be 4
    assert claims_answered(admin) - before <= 2
    assert stopped(worker) == 0
    handled = [
        line["task_id"] for line in workers.lines("worker-q") if line["event"] == "task completed"
    ]
    assert len(handled) == len(set(handled)) == 4


@pytest.mark.spec("C10 external-tasks")
def test_a_worker_that_cannot_work_says_why_in_one_line_and_exits_2(ecp_server, tenant, workers):
    cases = [
        ({}, "hold", "set ECP_API_KEY"),
        ({"ECP_TOKEN": ecp_server.token(tenant, "worker")}, "nowhere", "cannot load"),
        ({"ECP_TOKEN": "not-a-token"}, "charge", "the claim was refused: HTTP 401"),
        ({"ECP_TOKEN": ecp_server.token(tenant, "viewer")}, "charge", "refused: HTTP 403"),
    ]
    for index, (credentials, function, said) in enumerate(cases):
        process = workers.start(f"refused-{index}", function, credentials)
        assert process.wait(timeout=SECONDS) == 2
        text = (workers.scratch / f"refused-{index}.log").read_text(encoding="utf-8")
        assert said in text, text
        assert "Traceback" not in text
