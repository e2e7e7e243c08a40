"""``ecp serve --workers N``: real server processes on one real PostgreSQL (ADR 0062).

The parent does what happens once (the embedded PostgreSQL, secrets, migrations) and supervises
N worker processes on one socket; SIGTERM stops them all and then the database. Every worker runs
its own dispatcher and decision scheduler, so the claims must hold across processes: a due
schedule occurrence fires in exactly one process, a run's nodes run once each.
"""

import json
import pathlib
import re
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import httpx
import psycopg
import pytest
from tests.decisions.test_scheduler_race import DAY, daily_schedules, load_evidence
from tests.server.test_serve_lifecycle import (
    CHAIN_GRAPH,
    STEPS,
    Served,
    admin,
    assert_stopped_clean,
    data_dir,  # noqa: F401 - a fixture
    ecp_serve,  # noqa: F401 - a fixture
    postgres_processes,
)
from tests.support.e2e import Caller, check, deploy, steps

from ecp_core import Ecp
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

RUNS = 16
SCHEDULES = 6
WAIT_SECONDS = 60.0
JWT_SECRET = "w" * 40
ONE_DAY = timedelta(seconds=DAY)


def worker_pids(served: Served) -> list[int]:
    """The pids ``ecp serve`` announced for its server processes."""
    found = re.search(r"(\d+) server processes: pids ([\d, ]+)", served.output()[0])
    assert found, served.output()
    pids = [int(pid) for pid in found[2].split(", ")]
    assert len(pids) == int(found[1])
    return pids


def parent_of(pid: int) -> int:
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[1])


def alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def log_lines(served: Served, event: str) -> list[dict]:
    """The JSON log lines of ``event`` the server processes wrote so far."""
    lines = [json.loads(line) for line in served.output()[1].splitlines() if line.startswith("{")]
    return [line for line in lines if line["event"] == event]


def wait_for(read, done, what: str):
    deadline = time.monotonic() + WAIT_SECONDS
    while not done(value := read()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}; last seen {value}"
        time.sleep(0.05)
    return value


@pytest.mark.spec("C8 clean-stop")
def test_workers_share_one_embedded_database_run_each_node_once_and_stop_on_sigterm(
    ecp_serve,  # noqa: F811 - the fixture imported above
    data_dir,  # noqa: F811
):
    served = ecp_serve(data_dir, "--port", "0", "--workers", "2", ECP_LOG_FORMAT="json")
    base_url = served.wait_announced()
    pids = worker_pids(served)
    assert len(pids) == 2
    assert {parent_of(pid) for pid in pids} == {served.process.pid}
    # The parent started the embedded PostgreSQL once: one postmaster, the rest its children.
    pgdata = data_dir.resolve() / "pg"
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    assert {parent_of(pid) for pid in postgres_processes(pgdata) if pid != postmaster} <= {
        postmaster
    }

    with admin(base_url, data_dir) as caller:
        deploy(caller, CHAIN_GRAPH, "chain")
        started = []
        for _ in range(RUNS):  # a new connection each: the kernel hands it to either worker
            with httpx.Client(base_url=base_url, timeout=20.0) as fresh:
                run = Caller(fresh, caller.headers).post(
                    "/runs", json={"deployment_ref": "chain", "input": {}}
                )
                started.append(check(run, 201)["run_id"])
        for run_id in started:
            wait_for(
                lambda run_id=run_id: check(caller.get(f"/runs/{run_id}"), 200)["status"],
                lambda status: status == "completed",
                f"run {run_id} to complete",
            )
            assert steps(caller, run_id) == STEPS["completed"]  # every node once, none lost
            verified = check(caller.get(f"/runs/{run_id}/audit/verify"), 200)
            assert verified["verified"], verified
            assert verified["record_count"] == len(STEPS["completed"])
    served_by = {
        line["worker_pid"] for line in log_lines(served, "http request") if "worker_pid" in line
    }
    dispatched_by = Counter(line["worker_pid"] for line in log_lines(served, "run dispatched"))
    assert served_by <= set(pids)
    assert set(dispatched_by) <= set(pids)

    assert_stopped_clean(served, served.stop(signal.SIGTERM))
    assert not any(alive(pid) for pid in pids)


def blocked_claims(database: str) -> int:
    """Scheduler claims waiting for a row lock: the conditional update of a schedule."""
    with psycopg.connect(database, autocommit=True) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
            " AND query LIKE 'UPDATE ecp_decision_schedules SET next_run_at%%'"
        ).fetchone()
        return count


@pytest.mark.spec("§9.1 schedule-claims")
def test_each_due_schedule_fires_in_exactly_one_of_three_server_processes(
    ecp_serve,  # noqa: F811 - the fixture imported above
    data_dir,  # noqa: F811
    fresh_database,
):
    """Three schedulers are made to claim the same occurrences at the same moment.

    The schedules are due before the server starts, and a transaction of the test holds their
    rows: each worker's scheduler reads the due list and waits at its conditional update of the
    first schedule. Once all three wait, the rows are released. Every occurrence must then fire
    once: one decision, one "schedule fired" line, ``next_run_at`` one interval on.

    With the condition left out of the claim (``... WHERE schedule_id = %s`` alone), every
    schedule fires three times and the first assertion on the log fails.
    """
    workers = 3
    with PostgresStore(fresh_database, max_size=2) as store:
        ecp = Ecp.build(store.unit_of_work, signer=None)
        load_evidence(ecp, datetime.now(UTC) - 2 * ONE_DAY)
        made = daily_schedules(ecp, {f"schedule {index}": index for index in range(SCHEDULES)})
        with psycopg.connect(fresh_database) as holder:
            holder.execute("SELECT 1 FROM ecp_decision_schedules FOR UPDATE")
            served = ecp_serve(
                data_dir,
                "--port",
                "0",
                "--workers",
                str(workers),
                ECP_DATABASE_URL=fresh_database,
                ECP_JWT_SECRET=JWT_SECRET,
                ECP_LOG_FORMAT="json",
                ECP_CLOUD_SCHEDULER_ENABLED="true",
                ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS="0.1",
            )
            served.wait_announced()
            pids = worker_pids(served)
            # Every process's scheduler waits to claim the same first occurrence.
            wait_for(
                lambda: blocked_claims(fresh_database),
                lambda count: count == workers,
                "every scheduler to wait at its claim",
            )
            holder.commit()

        def schedules():
            return {s.schedule_id: s for s in ecp.decisions.schedules("t")}

        after = wait_for(
            schedules,
            lambda found: all(s.last_run_at is not None for s in found.values()),
            "every schedule to have run",
        )
        time.sleep(1.0)  # ten more passes of each scheduler: nothing further is due
        artifacts, _ = ecp.decisions.history("t", limit=100)
    fired = log_lines(served, "schedule fired")
    assert Counter(line["schedule_id"] for line in fired) == Counter(list(made))  # once each
    assert {line["worker_pid"] for line in fired} <= set(pids)
    assert sorted(a.schedule_id for a in artifacts) == sorted(made)
    for schedule_id, created in made.items():
        ran = after[schedule_id]
        assert ran.next_run_at == created.next_run_at + ONE_DAY
        assert ran.last_error is None
        (artifact,) = [a for a in artifacts if a.schedule_id == schedule_id]
        assert ran.last_decision_id == artifact.decision_id
    assert served.stop(signal.SIGTERM) == 0
    assert not any(alive(pid) for pid in pids)


def test_a_worker_that_cannot_start_refuses_the_start_and_stops_the_others(
    ecp_serve,  # noqa: F811 - the fixture imported above
    data_dir,  # noqa: F811
    fresh_database,
):
    served = ecp_serve(
        data_dir,
        "--port",
        "0",
        ECP_WORKERS="2",
        ECP_DATABASE_URL=fresh_database,
        ECP_JWT_SECRET=JWT_SECRET,
        ECP_LOG_FORMAT="json",
        ECP_ACTION_MODULES="no_such_module_here:register",
    )
    code, out, err = served.finished()
    assert code == 2, (out, err)
    assert "ECP is serving" not in out
    *logged, last = err.strip().splitlines()
    assert last.startswith("ecp: a server process could not start"), err
    refusals = [json.loads(line) for line in logged if line.startswith("{")]
    assert any(
        line["event"] == "server process could not start" and "no_such_module_here" in line["error"]
        for line in refusals
    ), err
