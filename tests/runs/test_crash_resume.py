"""A process killed with SIGKILL between node attempts; a new process resumes the run."""

import pathlib
import signal
import subprocess
import sys
import time

import pytest

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

WORKER = pathlib.Path(__file__).parents[1] / "support" / "crash_worker.py"
SEED = bytes(range(2, 34))


def worker(url, run_id, marker_dir, *extra):
    return subprocess.Popen(
        [sys.executable, str(WORKER), url, run_id, str(marker_dir), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.spec("§6.2 audit-per-attempt")
def test_a_killed_run_resumes_without_duplicates(fresh_database, tmp_path):
    signer = Ed25519Signer(SEED, key_id="crash")
    with PostgresStore(fresh_database, max_size=2) as store:
        ecp = Ecp.build(store.unit_of_work, signer=signer)
        ecp.actions.register("slow", lambda context: {})
        ecp.actions.register("stamp", lambda context: {})
        graph = (
            GraphBuilder("crashy")
            .action("fast", "stamp")
            .action("slow", "slow")
            .end("done")
            .chain("fast", "slow", "done")
            .build()
        )
        ecp.graphs.register("t", graph)
        ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="crashy", graph_id="crashy"))
        run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="crashy"))

        first = worker(fresh_database, run.run_id, tmp_path, "block")
        deadline = time.monotonic() + 60
        while not (tmp_path / "reached").exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the worker never reached the slow action"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
        assert first.returncode == -signal.SIGKILL

        interrupted = ecp.runs.get("t", run.run_id)
        assert interrupted.status.value == "RUNNING"
        assert interrupted.next_node_id == "slow"
        assert [e.node_id for e in ecp.audit.timeline("t", run.run_id).entries] == ["fast"]

        second = worker(fresh_database, run.run_id, tmp_path)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert out.strip() == "COMPLETED"

        entries = ecp.audit.timeline("t", run.run_id).entries
        assert [(e.attempt, e.node_id, e.status.value) for e in entries] == [
            (1, "fast", "succeeded"),
            (2, "slow", "succeeded"),
            (3, "done", "succeeded"),
        ]
        assert entries[1].output_snapshot == {"slow_done": True, "seen": True}
        result = ecp.audit.verify_run("t", run.run_id)
        assert (result.verified, result.signature_verified, result.record_count) == (True, True, 3)
        assert ecp.runs.get("t", run.run_id).output["slow_done"] is True
