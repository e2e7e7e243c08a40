"""Running docs/production.md's runbook blocks as written, and a PostgreSQL of a test's own.

The restore drill and the point-in-time recovery drill run the page's ``sh`` blocks with
PostgreSQL's programs on ``PATH`` (the embedded server's, else the system's). The recovery drill
needs a cluster it may archive, stop and recover, which the suite's shared server is not:
:func:`own_cluster` makes one with ``initdb`` in a folder of its own and stops whatever ran there
at the end. As root, PostgreSQL runs as pgserver's unprivileged user (it refuses root), and so do
the blocks that touch its files, as an operator runs them as the PostgreSQL system user.
"""

import contextlib
import importlib.util
import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import httpx
from tests.support.guides import with_values
from tests.support.runs import PAY_GRAPH

__all__ = [
    "GRAPHS",
    "Cluster",
    "approve_each",
    "charge_each",
    "own_cluster",
    "pg_tools",
    "run_block",
    "start",
    "until",
]

GRAPHS: list[dict[str, Any]] = [
    PAY_GRAPH,
    {
        "graph_id": "charge",
        "entry": "charge",
        "nodes": [
            {
                "id": "charge",
                "kind": "task",
                "action": {
                    "name": "payments.charge",
                    "fingerprint": "payments.charge/1",
                    "arguments": {"amount": "42.50"},
                    "capability_refs": [],
                    "side_effect": "idempotent",
                },
                "lock_seconds": 30,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "charge", "target": "done"}],
    },
    {
        "graph_id": "later",
        "entry": "later",
        "nodes": [{"id": "later", "kind": "wait", "seconds": 4}, {"id": "done", "kind": "end"}],
        "edges": [{"source": "later", "target": "done"}],
    },
]
"""The drills' graphs, each deployed under its graph id: ``pay`` waits for an approval,
``charge`` for a worker (topic ``payments.charge``), ``later`` for a 4 s timer."""


def pg_tools() -> pathlib.Path:
    """The directory of PostgreSQL's programs: the embedded server's, else those on PATH."""
    spec = importlib.util.find_spec("pgserver")  # located, not imported (it warns on import)
    origin = spec.origin if spec is not None else None
    bundled = pathlib.Path(origin or "/nowhere").parent / "pginstall" / "bin"
    if (bundled / "pg_dump").exists():
        return bundled
    found = shutil.which("pg_dump")
    assert found is not None, "PostgreSQL's programs (pg_dump ...) are needed for the drills"
    return pathlib.Path(found).parent


def run_block(block: str, values: dict[str, str], *, user: str | None = None) -> str:
    """One of the guide's sh blocks, as written, with its exported variables set to ``values``.

    ``user`` runs it as that system user (the PostgreSQL one); its output is returned.
    """
    path = os.pathsep.join(
        [str(pg_tools()), str(pathlib.Path(sys.executable).parent), "/usr/bin", "/bin"]
    )
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, "-c", "set -euo pipefail\n" + with_values(block, values)],
        capture_output=True,
        text=True,
        env={"PATH": path, "TZ": "UTC"},
        cwd="/",
        user=user,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def start(client: httpx.Client, ref: str, status: str, auth: dict[str, str]) -> str:
    """Start a run of deployment ``ref``, wait for it to reach ``status``; its id."""
    answer = client.post(
        "/runs", json={"deployment_ref": ref, "input": {}}, headers={**auth, "Prefer": "wait=10"}
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == status, answer.json()
    return str(answer.json()["run_id"])


def approve_each(client: httpx.Client, run_ids: list[str], auth: dict[str, str]) -> None:
    """Approve each run, which waits for its approval: each must complete by it."""
    for run_id in run_ids:
        run = client.get(f"/runs/{run_id}", headers=auth).json()
        assert run["status"] == "waiting_approval", run
        path = f"/deployments/pay/approvals/{run['pending_approval_ids'][0]}/resolve"
        headers = {**auth, "Prefer": "wait=10"}
        decided = client.post(path, json={"decision": "approve"}, headers=headers)
        assert decided.json()["run"]["status"] == "completed", decided.text


def charge_each(client: httpx.Client, run_ids: list[str], worker: dict[str, str]) -> None:
    """Claim the charge tasks there are, which must be those of ``run_ids``, and complete each."""
    claim = {
        "worker_id": "drill",
        "topics": ["payments.charge"],
        "max_tasks": 10,
        "wait_seconds": 5,
    }
    claimed = client.post("/v1/tasks/claim", json=claim, headers=worker).json()["tasks"]
    assert sorted(task["run_id"] for task in claimed) == sorted(run_ids)
    for task in claimed:
        done = {"lock_token": task["lock_token"], "output": {"charged": True}}
        path = f"/v1/tasks/{task['task_id']}/complete"
        assert client.post(path, json=done, headers=worker).status_code == 200


def until(condition: Callable[[], object], what: str, seconds: float = 60) -> None:
    """Wait for ``condition`` to hold; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)


def _postgres_user() -> str | None:
    """As root, pgserver's unprivileged user, made able to run the bundled programs as pgserver
    makes it for its own server (the suite's may not have started yet); else None."""
    if os.geteuid() != 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns on import without XDG_RUNTIME_DIR
        from pgserver import utils

    utils.ensure_user_exists("pgserver")
    utils.ensure_prefix_permissions(pg_tools())
    readable, runnable = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
    utils.ensure_folder_permissions(pg_tools(), readable | runnable)
    utils.ensure_folder_permissions(pg_tools().parent / "lib", readable)
    return "pgserver"


class Cluster:
    """A PostgreSQL cluster in ``folder``: its data directories, archive and backups live there.

    It listens on a unix socket in ``folder`` only (no TCP port to collide on), set in the first
    data directory's ``postgresql.conf``, which a base backup carries to a recovered one.
    """

    def __init__(self, folder: pathlib.Path) -> None:
        """A cluster to be made in ``folder`` (nothing runs yet)."""
        self.folder = folder
        self.user = _postgres_user()
        self._own(folder)

    def mkdir(self, name: str) -> pathlib.Path:
        """A new folder ``name`` in the cluster's folder, owned by the PostgreSQL user."""
        path = self.folder / name
        path.mkdir()
        self._own(path)
        return path

    def _own(self, path: pathlib.Path) -> None:
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [str(pg_tools() / program), *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            user=self.user,
            cwd="/",
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, f"{program} {' '.join(args)}: {done.stdout}{done.stderr}"

    def initdb(self, name: str) -> pathlib.Path:
        """A new data directory ``name`` (trust authentication, superuser postgres)."""
        pgdata = self.folder / name
        self._run("initdb", "--auth=trust", "--encoding=utf8", "-U", "postgres", "-D", str(pgdata))
        with (pgdata / "postgresql.conf").open("a") as conf:
            conf.write(f"listen_addresses = ''\nunix_socket_directories = '{self.folder}'\n")
        return pgdata

    def start(self, pgdata: pathlib.Path) -> None:
        """Start the server on ``pgdata`` and wait until it accepts connections."""
        self._run("pg_ctl", "-D", str(pgdata), "-l", str(pgdata / "log"), "-w", "start")

    def stop(self, pgdata: pathlib.Path) -> None:
        """Stop the server on ``pgdata`` (a fast shutdown), if it runs."""
        if (pgdata / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "stop")

    def url(self, database: str) -> str:
        """A libpq URL of ``database`` as the superuser, over the cluster's socket."""
        return f"postgresql://postgres@/{database}?host={self.folder}"


@contextlib.contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A cluster in a new folder outside pytest's (whose folders PostgreSQL's user cannot enter).

    At the end every server that ran on one of its data directories is stopped (the recovery
    drill's second one is started by the runbook, not by :meth:`Cluster.start`) and the folder
    removed, even when the test failed.
    """
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ecp-pitr-"))
    cluster = Cluster(folder)
    try:
        yield cluster
    finally:
        try:
            for pgdata in sorted(path.parent for path in folder.glob("*/postmaster.pid")):
                with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
                    cluster.stop(pgdata)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
