"""The run-dispatch worker: shared work across workers and stores, and draining on stop."""

import threading
import time
from datetime import UTC, datetime

import pytest

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.memory import MemoryStore
from ecp_http.background.dispatch import Dispatcher
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(5, 37)), key_id="dispatch")


def deployed(store, actions=None):
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
    for name, handler in (actions or {}).items():
        ecp.actions.register(name, handler)
    graph = (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"a": 1}})
        .action("b", "slow" if actions else "echo")
        .end("c")
        .chain("a", "b", "c")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp


def wait_for(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.spec("C3 run-start")
def test_two_dispatchers_on_two_stores_share_the_work(fresh_database):
    with PostgresStore(fresh_database) as one, PostgresStore(fresh_database) as two:
        ecp = deployed(one)
        other = Ecp.build(two.unit_of_work, signer=SIGNER)
        run_ids = [
            ecp.runs.start("t", StartRunRequest(deployment_ref="d"))[0].run_id for _ in range(12)
        ]
        workers = [
            Dispatcher(ecp.runs, workers=2, poll_seconds=0.02),
            Dispatcher(other.runs, workers=2, poll_seconds=0.02),
        ]
        for worker in workers:
            worker.start()
        try:
            wait_for(lambda: all(ecp.runs.get("t", r).status.value == "COMPLETED" for r in run_ids))
        finally:
            for worker in workers:
                worker.stop()
        for run_id in run_ids:
            assert [e.node_id for e in ecp.audit.timeline("t", run_id).entries] == ["a", "b", "c"]
            assert ecp.audit.verify_run("t", run_id).verified


@pytest.mark.spec("§6.1 drain-on-shutdown")
def test_stop_drains_the_attempt_in_flight(fresh_database):
    entered, release = threading.Event(), threading.Event()

    def slow(context):
        entered.set()
        release.wait(10)
        return {"slow": True}

    with PostgresStore(fresh_database) as store:
        ecp = deployed(store, {"slow": slow})
        run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
        dispatcher = Dispatcher(ecp.runs, workers=1, poll_seconds=0.02)
        dispatcher.start()
        assert entered.wait(30)
        stopper = threading.Thread(target=dispatcher.stop)
        stopper.start()
        time.sleep(0.1)
        assert stopper.is_alive(), "stop returned while an attempt was in flight"
        release.set()
        stopper.join(30)
        assert not dispatcher.alive
        drained = ecp.runs.get("t", run.run_id)
        assert drained.next_node_id == "c"
        assert [e.node_id for e in ecp.audit.timeline("t", run.run_id).entries] == ["a", "b"]


@pytest.mark.spec("C3 approval-escalation")
def test_overdue_approvals_are_escalated_by_the_sweep(fresh_database):
    from ecp_core.system import FixedClock

    clock = FixedClock(datetime.now(UTC))
    with PostgresStore(fresh_database) as store:
        ecp = Ecp.build(store.unit_of_work, signer=SIGNER, clock=clock)
        ecp.graphs.register(
            "t", GraphBuilder("s").approval("r", summary="s", rationale="r", sla_seconds=5).build()
        )
        ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="s", graph_id="s"))
        run = ecp.runs.drive(
            "t", ecp.runs.start("t", StartRunRequest(deployment_ref="s"))[0].run_id
        )
        first = run.pending_approval_ids[0]
        clock.advance(6)
        dispatcher = Dispatcher(
            ecp.runs,
            workers=1,
            poll_seconds=0.02,
            sweeps=[("escalate", ecp.approvals.escalate_overdue, 0.05)],
        )
        dispatcher.start()
        try:
            wait_for(lambda: ecp.runs.get("t", run.run_id).pending_approval_ids != (first,))
        finally:
            dispatcher.stop()
        (replacement,) = ecp.runs.get("t", run.run_id).pending_approval_ids
        assert ecp.approvals.get("t", replacement).escalated_from_id == first
        assert ecp.approvals.get("t", first).status.value == "escalated"


def test_a_sweep_that_knows_its_next_work_is_run_again_by_then(memory_runs):
    """A sweep returning seconds is called again within them, not only after its interval."""
    calls: list[float] = []

    def sweep() -> float | None:
        calls.append(time.monotonic())
        return 0.01 if len(calls) < 4 else None  # then nothing to do for an hour

    dispatcher = Dispatcher(memory_runs, workers=0, poll_seconds=1, sweeps=[("s", sweep, 3600)])
    dispatcher.start()
    try:
        wait_for(lambda: len(calls) >= 4)
    finally:
        dispatcher.stop()
    assert len(calls) == 4  # the fourth said nothing is due: the hour's interval stands


@pytest.fixture
def memory_runs():
    return Ecp.build(MemoryStore().unit_of_work, signer=SIGNER).runs
