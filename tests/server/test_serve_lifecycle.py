"""``ecp serve`` as an operator runs it: real processes, stopped by SIGTERM, SIGINT or SIGKILL.

A stop drains the workers, stops the embedded PostgreSQL and exits 0; the runs it held resume
after a restart. Start-up refusals (data directory in use, port in use, database unreachable)
are one line on stderr, exit code 2, and nothing announced.
"""

import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import httpx
import pytest
from tests.support.e2e import Caller, check, deploy, example_graph, poll_until, start, steps
from tests.support.receiver import receiver

from ecp_http.server.auth import mint_token

pytestmark = pytest.mark.integration

ECP = pathlib.Path(sys.executable).with_name("ecp")
STARTUP_SECONDS = 60.0
STOP_SECONDS = 60.0
RUNS_PER_GRAPH = 12

CHAIN_GRAPH = {
    "graph_id": "chain",
    "entry": "a",
    "nodes": [
        *(
            {
                "id": node,
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {node: True}},
                },
            }
            for node in "abcd"
        ),
        {"id": "done", "kind": "end"},
    ],
    "edges": [
        {"source": source, "target": target}
        for source, target in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "done")]
    ],
}


STEPS = {
    "completed": [(node, "succeeded") for node in ("a", "b", "c", "d", "done")],
    "waiting_approval": [("classify", "succeeded"), ("review", "waiting_approval")],
}


class Served:
    """One ``ecp serve`` process with its output in files."""

    def __init__(
        self, data_dir: pathlib.Path, logs: pathlib.Path, args: tuple[str, ...], env: dict[str, str]
    ) -> None:
        self.data_dir = data_dir
        self.out = logs.with_suffix(".out")
        self.err = logs.with_suffix(".err")
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                [str(ECP), "serve", "--host", "127.0.0.1", *args],
                env=env,
                stdout=out,
                stderr=err,
                text=True,
            )

    def output(self) -> tuple[str, str]:
        return self.out.read_text(), self.err.read_text()

    def wait_announced(self) -> str:
        """The announced base URL, once the server answers there."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.output()
            found = re.search(r"ECP is serving on (http://\S+)", self.out.read_text())
            if found:
                try:
                    httpx.get(f"{found[1]}/health/live", timeout=2.0)
                except httpx.TransportError:
                    pass
                else:
                    return found[1]
            time.sleep(0.05)
        pytest.fail(f"ecp serve did not serve within {STARTUP_SECONDS:.0f} s: {self.output()}")

    def stop(self, signum: int) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=STOP_SECONDS)

    def finished(self) -> tuple[int, str, str]:
        """Exit code, stdout and stderr of a process expected to end on its own."""
        code = self.process.wait(timeout=STARTUP_SECONDS)
        return (code, *self.output())


def postgres_processes(pgdata: pathlib.Path) -> list[int]:
    """Pids of PostgreSQL processes serving ``pgdata`` (named on the command line or as cwd)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "exe").readlink().name != "postgres":
                continue
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            if str(pgdata).encode() in arguments or (entry / "cwd").readlink() == pgdata:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def data_dir() -> Iterator[pathlib.Path]:
    """A fresh ``ECP_DATA_DIR`` outside pytest's private temporary root.

    The embedded PostgreSQL runs as another user when the tests run as root, and other pytest
    sessions reset their root to 0700; a short path also keeps the server's socket path legal.
    """
    path = pathlib.Path(tempfile.mkdtemp(prefix="ecp-serve-"))
    path.chmod(0o755)
    yield path / "ecp"
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ecp_serve(tmp_path, data_dir) -> Iterator:
    """Start ``ecp serve`` processes; at the end kill what is left, PostgreSQL included."""
    started: list[Served] = []

    def run(data_dir: pathlib.Path, *args: str, **env: str) -> Served:
        environment = {
            key: value for key, value in os.environ.items() if not key.startswith("ECP_")
        }
        environment |= {
            "ECP_DATA_DIR": str(data_dir),
            "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
            "ECP_CLOUD_SCHEDULER_ENABLED": "false",
            **env,
        }
        logs = tmp_path / f"serve-{len(started)}"
        served = Served(data_dir, logs, args or ("--port", "0"), environment)
        started.append(served)
        return served

    yield run
    for served in started:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait()
    for served in started:
        for pid in postgres_processes(served.data_dir.resolve() / "pg"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGQUIT)


@contextlib.contextmanager
def admin(base_url: str, data_dir: pathlib.Path) -> Iterator[Caller]:
    """An admin of tenant ``acme`` with the data directory's development secret."""
    secret = (data_dir / "jwt-secret").read_text().strip()
    token = mint_token(secret, tenant="acme", roles=["admin"])
    with httpx.Client(base_url=base_url, timeout=20.0) as client:
        yield Caller(client, {"Authorization": f"Bearer {token}"})


def assert_stopped_clean(served: Served, code: int) -> None:
    out, err = served.output()
    assert code == 0, (out, err)
    pgdata = served.data_dir.resolve() / "pg"
    assert postgres_processes(pgdata) == []
    assert not (pgdata / "postmaster.pid").exists()


@pytest.mark.spec("C8 clean-stop", "§6.1 drain-on-shutdown")
def test_sigterm_drains_stops_postgres_and_the_runs_resume(ecp_serve, data_dir):
    with receiver() as hooks:
        # One dispatch worker, so runs are still queued or in flight when SIGTERM arrives.
        first = ecp_serve(data_dir, ECP_DISPATCH_WORKERS="1")
        with admin(first.wait_announced(), data_dir) as caller:
            deploy(caller, example_graph(), "refunds")
            deploy(caller, CHAIN_GRAPH, "chain")
            subscription = {
                "deployment_ref": "chain",
                "target_url": hooks.url,
                "event_types": ["run.completed"],
            }
            check(caller.post("/webhooks/subscriptions", json=subscription), 201)
            runs = {
                start(caller, ref, wait=False)["run_id"]: status
                for _ in range(RUNS_PER_GRAPH)
                for ref, status in [("refunds", "waiting_approval"), ("chain", "completed")]
            }
        assert_stopped_clean(first, first.stop(signal.SIGTERM))

        second = ecp_serve(data_dir)
        with admin(second.wait_announced(), data_dir) as caller:
            for run_id, status in runs.items():
                assert poll_until(caller, run_id, {status}, seconds=30)["status"] == status
                # an attempt in flight at the stop committed once: no step twice, none lost
                assert steps(caller, run_id) == STEPS[status]
        completed = {run_id for run_id, status in runs.items() if status == "completed"}
        deadline = time.monotonic() + 30
        while {delivery_run(r.body) for r in hooks.received} != completed:
            assert time.monotonic() < deadline, "not every run.completed event was delivered"
            time.sleep(0.05)
        assert_stopped_clean(second, second.stop(signal.SIGTERM))


def delivery_run(body: bytes) -> str:
    return json.loads(body)["data"]["run_id"]


@pytest.mark.spec("C8 clean-stop")
def test_sigint_stops_the_same_way_even_after_a_crashed_server(ecp_serve, data_dir):
    crashed = ecp_serve(data_dir)
    crashed.wait_announced()
    crashed.process.kill()
    crashed.process.wait()
    pgdata = data_dir.resolve() / "pg"
    assert postgres_processes(pgdata), "a killed server leaves its PostgreSQL running"

    again = ecp_serve(data_dir)
    with admin(again.wait_announced(), data_dir) as caller:
        deploy(caller, CHAIN_GRAPH, "chain")
        assert start(caller, "chain")["status"] == "completed"
    assert_stopped_clean(again, again.stop(signal.SIGINT))


def one_line_refusal(served: Served, pattern: str) -> None:
    code, out, err = served.finished()
    assert code == 2, (out, err)
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert re.fullmatch(pattern, err.strip()), err


@pytest.mark.spec("C8 clean-stop")
def test_a_second_server_on_the_same_data_directory_is_refused(ecp_serve, data_dir, fresh_database):
    first = ecp_serve(data_dir, ECP_DATABASE_URL=fresh_database)
    first.wait_announced()
    assert "Bearer " in first.output()[0]  # the development secret: a token to try it with
    second = ecp_serve(data_dir, ECP_DATABASE_URL=fresh_database)
    one_line_refusal(
        second,
        rf"ecp: the data directory {re.escape(str(data_dir.resolve()))} is in use by another "
        rf"ecp serve \(pid {first.process.pid}\)",
    )
    assert first.process.poll() is None
    assert first.stop(signal.SIGTERM) == 0


@pytest.mark.spec("C8 clean-stop")
def test_a_port_in_use_is_one_line_and_nothing_announced(ecp_serve, data_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        served = ecp_serve(data_dir, "--port", str(port))
        one_line_refusal(
            served, rf"ecp: cannot listen on 127\.0\.0\.1:{port}: address already in use"
        )
    assert not (data_dir / "pg").exists()


def test_an_unreachable_database_is_one_line(ecp_serve, data_dir):
    served = ecp_serve(data_dir, ECP_DATABASE_URL="postgresql://u:hunter2@127.0.0.1:1/x")
    one_line_refusal(served, r"ecp: cannot reach the database: .*127\.0\.0\.1.*port 1 failed.*")
    assert "hunter2" not in served.output()[1]


def test_an_embedded_server_that_cannot_start_is_one_line(ecp_serve, data_dir):
    data_dir.mkdir()
    (data_dir / "pg").write_text("not a directory")
    served = ecp_serve(data_dir)
    one_line_refusal(
        served,
        rf"ecp: the embedded PostgreSQL in {re.escape(str(data_dir / 'pg'))} did not start .*",
    )


def test_a_secret_of_the_operators_own_gets_no_token_printed(ecp_serve, data_dir, fresh_database):
    """stdout ends up in logs: an admin token signed with a real ECP_JWT_SECRET would be a real one."""
    served = ecp_serve(data_dir, ECP_DATABASE_URL=fresh_database, ECP_JWT_SECRET="o" * 48)
    served.wait_announced()
    out, _ = served.output()
    assert "ECP is serving on" in out
    assert "Bearer" not in out
    assert not (data_dir / "jwt-secret").exists()
    assert served.stop(signal.SIGTERM) == 0


NAP_GRAPH = {
    "graph_id": "nap",
    "entry": "nap",
    "nodes": [{"id": "nap", "kind": "wait", "seconds": 2}, {"id": "done", "kind": "end"}],
    "edges": [{"source": "nap", "target": "done"}],
}


@pytest.mark.spec("C14 timer-durable")
def test_waiting_timers_survive_a_sigkill_and_wake_after_the_restart(
    ecp_serve, data_dir, fresh_database
):
    first = ecp_serve(data_dir, ECP_DATABASE_URL=fresh_database)
    with admin(first.wait_announced(), data_dir) as caller:
        deploy(caller, NAP_GRAPH, "nap")
        waiting = [start(caller, "nap") for _ in range(RUNS_PER_GRAPH)]
    assert {run["status"] for run in waiting} == {"waiting_timer"}
    first.process.kill()  # SIGKILL: no drain, no goodbye
    first.process.wait()

    second = ecp_serve(data_dir, ECP_DATABASE_URL=fresh_database)
    with admin(second.wait_announced(), data_dir) as caller:
        for run in waiting:
            assert poll_until(caller, run["run_id"], {"completed"}, seconds=30)
            assert steps(caller, run["run_id"]) == [
                ("nap", "waiting_timer"),
                ("nap", "succeeded"),
                ("done", "succeeded"),
            ]
            timeline = check(caller.get(f"/runs/{run['run_id']}/timeline"), 200)
            wake = timeline["entries"][1]["execution_metadata"]
            assert wake["woke_at"] >= wake["wait_until"] == run["wait_until"]  # never early
    assert_stopped_clean(second, second.stop(signal.SIGTERM))
