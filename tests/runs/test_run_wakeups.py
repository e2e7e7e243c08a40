"""Completed runs through HTTP without wasted work (ADR 0065): one wake-up calls one idle worker,
a wake-up while every worker is busy is not lost, and ``Prefer: wait`` answers from the run the
dispatcher just moved instead of reading it again. The workers poll every ten minutes here, so
only the wake-ups can explain an answer."""

import base64
import threading
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.support.runs import deploy_three_steps

from ecp_core import Ecp, Ed25519Signer, StartRunRequest
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_core.runs.run.model import Run
from ecp_http.background.dispatch import Dispatcher
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "w" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")
SLOW_POLL = 600.0
DEADLINE = 30.0
SIGNER = Ed25519Signer(bytes(range(21, 53)), key_id="wakeups")


class CountedRuns:
    """The real run service, counting the claims the dispatcher makes (it changes nothing)."""

    def __init__(self, ecp: Ecp, *, hold_first_empty: threading.Event | None = None) -> None:
        self.ecp = ecp
        self.claims = 0
        self.empty = 0
        self.hold = hold_first_empty
        self.held = threading.Event()

    def advance_next(self) -> Run | None:
        self.claims += 1
        run = self.ecp.runs.advance_next()
        self.empty += run is None
        if run is None and self.hold is not None and not self.held.is_set():
            self.held.set()
            self.hold.wait(DEADLINE)  # the worker is busy, not waiting, while this holds
        return run


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def completed(ecp: Ecp, run_id: str) -> bool:
    return ecp.runs.get("a", run_id).status.value == "COMPLETED"


@pytest.mark.spec("C3 run-start")
def test_one_wake_up_calls_one_idle_worker():
    ecp = Ecp.build(MemoryStore().unit_of_work, signer=SIGNER)
    deploy_three_steps(ecp, "a")
    runs = CountedRuns(ecp)
    dispatcher = Dispatcher(runs, workers=3, poll_seconds=SLOW_POLL)  # type: ignore[arg-type]
    dispatcher.start()
    try:
        wait_until(lambda: runs.empty == 3, "each worker's first claim")
        time.sleep(0.2)  # all three wait now
        run, _ = ecp.runs.start("a", StartRunRequest(deployment_ref="d"))
        dispatcher.wake()
        wait_until(lambda: completed(ecp, run.run_id), "the run to complete")
        time.sleep(0.2)
    finally:
        dispatcher.stop()
    # One worker answered: it claimed the run until it ended, then once more and found nothing.
    # Waking every idle worker cost two more claims per wake-up, both empty.
    assert runs.empty == 3 + 1


@pytest.mark.spec("C3 run-start")
def test_a_wake_up_while_every_worker_is_busy_is_not_lost():
    ecp = Ecp.build(MemoryStore().unit_of_work, signer=SIGNER)
    deploy_three_steps(ecp, "a")
    release = threading.Event()
    runs = CountedRuns(ecp, hold_first_empty=release)
    dispatcher = Dispatcher(runs, workers=1, poll_seconds=SLOW_POLL)  # type: ignore[arg-type]
    dispatcher.start()
    try:
        assert runs.held.wait(DEADLINE)  # the only worker claimed nothing and is still busy
        run, _ = ecp.runs.start("a", StartRunRequest(deployment_ref="d"))
        dispatcher.wake()  # no worker waits to hear it
        release.set()
        # Without the remembered call the worker would wait ten minutes for its poll.
        wait_until(lambda: completed(ecp, run.run_id), "the run to complete")
    finally:
        release.set()
        dispatcher.stop()


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=SLOW_POLL)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


@pytest.mark.spec("C3 run-start")
def test_prefer_wait_answers_from_the_dispatchers_run_without_reading_it(client, monkeypatch):
    headers = {"Authorization": f"Bearer {mint_token(SECRET, tenant='acme', roles=['admin'])}"}
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=headers).status_code == 201
    deployment = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
    assert client.post("/v1/deployments", json=deployment, headers=headers).status_code == 201
    service = client.app.state.runtime.ecp.runs
    reads: list[str] = []
    real_get = service.get

    def counted_get(tenant_id: str, run_id: str) -> Run:
        reads.append(run_id)
        return real_get(tenant_id, run_id)

    monkeypatch.setattr(service, "get", counted_get)
    for index in range(5):
        started = client.post(
            "/runs",
            json={"deployment_ref": "refunds", "input": {"order": f"A-{index}"}},
            headers={**headers, "Prefer": "wait=30"},
        )
        assert started.status_code == 201, started.text
        assert started.json()["status"] == "waiting_approval"
    # The answer came from the run the dispatcher rang with: the handler read nothing again
    # (before ADR 0065, one read right after the start and one per ring).
    assert reads == []
    answer = client.get(f"/runs/{started.json()['run_id']}", headers=headers).json()
    assert answer == started.json()
