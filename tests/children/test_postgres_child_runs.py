"""Child runs on PostgreSQL under concurrent dispatch: each child's end is recorded once (ADR 0046).

Several dispatchers claim runs at once while another thread keeps locking the parents (reading
them as a request would); every child's end writes exactly one record in its parent's chain,
because the parent's status is checked under its row lock in the child's final transaction.
"""

import threading
import time

import pytest
from tests.support.child_runs import SIGNER, TENANT, calling, leaf

from ecp_core import CreateDeploymentRequest, Ecp, StartRunRequest
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import RunStatus

pytestmark = pytest.mark.integration

PARENTS = 12
DISPATCHERS = 4


@pytest.mark.spec("§2.1 subgraph-node")
def test_concurrent_dispatchers_record_each_child_end_once(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    for ref, graph in (
        ("leaf", leaf()),
        ("mid", calling("mid", "leaf")),
        ("top", calling("top", "mid")),
    ):
        ecp.graphs.register(TENANT, graph)
        ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref=ref, graph_id=ref))
    parents = [
        ecp.runs.start(TENANT, StartRunRequest(deployment_ref="top", input={"i": i}))[0].run_id
        for i in range(PARENTS)
    ]
    stop = threading.Event()
    errors: list[BaseException] = []

    def dispatch() -> None:
        try:
            while not stop.is_set():
                if ecp.runs.advance_next() is None:
                    time.sleep(0.005)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    def read_parents() -> None:
        try:
            while not stop.is_set():
                for run_id in parents:
                    ecp.runs.advance(TENANT, run_id)  # locks the parent; a waiting one stays
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=dispatch) for _ in range(DISPATCHERS)]
    threads.append(threading.Thread(target=read_parents))
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and not errors:
            if all(ecp.runs.get(TENANT, r).status in TERMINAL for r in parents):
                break
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert errors == []
    for run_id in parents:
        top = ecp.runs.get(TENANT, run_id)
        assert top.status is RunStatus.COMPLETED
        tree = [top]
        for run in tree:
            tree.extend(ecp.runs.children(TENANT, run.run_id, limit=10)[0])
        assert len(tree) == 3
        for run in tree:
            records = ecp.audit.timeline(TENANT, run.run_id).entries
            named = [
                r.execution_metadata["child_run_id"]
                for r in records
                if isinstance(r.execution_metadata, dict) and "child_run_id" in r.execution_metadata
            ]
            kids = [c.run_id for c in ecp.runs.children(TENANT, run.run_id, limit=10)[0]]
            assert named == kids
            assert ecp.audit.verify_run(TENANT, run.run_id).verified
