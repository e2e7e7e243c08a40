"""A rolling upgrade: the previous release and this one serving one database under load.

The previous release (CHANGELOG.md's newest cut entry) is checked out from its recorded commit
into a git worktree and installed into a venv of its own with uv (the serving packages only, from
the machine's uv cache). It serves a fresh database, which it migrates to its schema, under load:
approval runs started and approved over HTTP with idempotency keys, each approved through a
server other than the one that started it whenever there are two. This build's server then starts
on the same database and applies its newer migrations while the old one serves; both serve the
load; the old one is taken out of the pool once its readiness says 503 and stopped with SIGTERM.
Runs the old release left waiting for their approval are approved on this one.

Then: no answer from either server was a 5xx; every acknowledged run completed exactly once and
no other run exists; every chain verifies; and the old server's readiness said ``current`` until
the first newer migration was applied, ``newer`` (503) never before it, and always ``newer`` from
just after the last one.
"""

import contextlib
import itertools
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC
from typing import Any

import httpx
import psycopg
import pytest
from tests.support.live_serve import LiveServer, ecp_serve
from tests.support.release import git, missing_commit, previous_release
from tests.support.runs import PAY_GRAPH

from ecp_http import version
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

TENANT = "rolling"
WORKERS = 3
SETTINGS = {"ECP_DISPATCH_POLL_SECONDS": "0.05", "ECP_DISPATCH_WORKERS": "2"}
SLACK_SECONDS = 1.0
"""How long after the last newer migration is applied an old readiness check may still say
``current``: the migration's commit and a schema read already in flight."""


@pytest.fixture
def old_ecp(tmp_path) -> Iterator[pathlib.Path]:
    """The previous release's ``ecp``, in a worktree and venv removed afterwards."""
    _, commit = previous_release()
    if reason := missing_commit(commit):
        pytest.skip(f"the previous release cannot be checked out: {reason}")
    checkout = tmp_path / "previous"
    added = git("worktree", "add", "--detach", str(checkout), commit)
    assert added.returncode == 0, added.stderr
    try:
        foreign = {"VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT"}
        env = {k: v for k, v in os.environ.items() if k not in foreign}
        uv = pathlib.Path(sys.executable).with_name("uv")
        sync = [str(uv), "sync", "--locked", "--no-default-groups", "--python", sys.executable]
        done = subprocess.run(
            sync,
            cwd=checkout,
            env=env | {"UV_PYTHON_DOWNLOADS": "never"},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        yield checkout / ".venv" / "bin" / "ecp"
    finally:
        git("worktree", "remove", "--force", str(checkout))
        shutil.rmtree(checkout, ignore_errors=True)
        git("worktree", "prune")


@pytest.fixture
def database(postgres_url) -> Iterator[str]:
    """A new, empty database: the old release migrates it to its schema."""
    name = f"ecp_rolling_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    yield create_database(postgres_url, name)
    drop_database(postgres_url, name)


class Load:
    """Clients starting and approving runs on the servers in the pool until stopped.

    A client takes its two servers from the pool when it starts a run and holds them until the
    run is approved, so a server :meth:`leave` returns from receives no more requests.
    """

    def __init__(self, token: str, first: str) -> None:
        self.headers = {"Authorization": f"Bearer {token}"}
        self.acknowledged: list[str] = []
        self.faults: list[str] = []
        self.answers: Counter[tuple[str, int]] = Counter()
        self._pool = [first]
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._work, args=(n,), daemon=True) for n in range(WORKERS)
        ]
        for thread in self._threads:
            thread.start()

    def join(self, url: str) -> None:
        """Send to ``url`` too."""
        with self._lock:
            self._pool.append(url)

    def leave(self, url: str) -> None:
        """Send nothing more to ``url`` (what a load balancer does on its 503), once it is idle."""
        with self._lock:
            self._pool.remove(url)
        until(lambda: self._held[url] == 0, f"the requests in flight to {url} answered")

    def until_acknowledged(self, count: int, what: str) -> None:
        """Wait for ``count`` acknowledged runs, failing with the faults seen when they stall."""
        deadline = time.monotonic() + 30
        while len(self.acknowledged) < count:
            assert time.monotonic() < deadline, f"never: {what}; faults: {self.faults[:3]}"
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def _take(self, n: int) -> tuple[str, str]:
        with self._lock:
            first, second = self._pool[n % len(self._pool)], self._pool[(n + 1) % len(self._pool)]
            self._held.update((first, second))
        return first, second

    def _call(
        self, client: httpx.Client, url: str, path: str, body: object, key: str
    ) -> dict[str, Any] | None:
        """POST ``body`` with an idempotency key; the answer's JSON, or None (a fault noted)."""
        headers = self.headers | {"Idempotency-Key": key, "Prefer": "wait=10"}
        try:
            answer = client.post(url + path, json=body, headers=headers)
        except httpx.TransportError as exc:
            self.faults.append(f"{url}{path}: {exc!r}")
            return None
        self.answers[url, answer.status_code] += 1
        if not answer.is_success:
            self.faults.append(f"{url}{path}: {answer.status_code} {answer.text}")
            return None
        return dict(answer.json())

    def _work(self, worker: int) -> None:
        with httpx.Client(timeout=30) as client:
            for n in itertools.count():
                if self._stop.is_set():
                    return
                first, second = self._take(n)
                try:
                    self._round(client, first, second, f"rolling-{worker}-{n}")
                finally:
                    with self._lock:
                        self._held.subtract((first, second))

    def _round(self, client: httpx.Client, first: str, second: str, key: str) -> None:
        """Start a run on ``first`` and approve it on ``second``."""
        body = {"deployment_ref": "pay", "input": {"key": key}}
        run = self._call(client, first, "/runs", body, key)
        if run is None:
            return
        self.acknowledged.append(run["run_id"])
        if run["status"] != "waiting_approval":
            self.faults.append(f"{key} started as {run['status']}, not waiting_approval")
            return
        path = f"/deployments/pay/approvals/{run['pending_approval_ids'][0]}/resolve"
        self._call(client, second, path, {"decision": "approve"}, f"{key}-approve")


class Readiness:
    """The old server's ``/health/ready``, polled: (sent, answered, status, schema) each time."""

    def __init__(self, url: str) -> None:
        self.seen: list[tuple[float, float, int, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, args=(url,), daemon=True)
        self._thread.start()

    def _poll(self, url: str) -> None:
        with httpx.Client(timeout=10) as client:
            while not self._stop.is_set():
                sent = time.time()
                answer = client.get(f"{url}/health/ready")
                schema = answer.json()["checks"]["schema"]
                self.seen.append((sent, time.time(), answer.status_code, schema))
                time.sleep(0.05)

    def until_acknowledged(self, count: int, what: str) -> None:
        """Wait for ``count`` acknowledged runs, failing with the faults seen when they stall."""
        deadline = time.monotonic() + 30
        while len(self.acknowledged) < count:
            assert time.monotonic() < deadline, f"never: {what}; faults: {self.faults[:3]}"
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def latest(self) -> str:
        return self.seen[-1][3] if self.seen else ""


def until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def applied(url: str) -> dict[str, float]:
    """Every applied migration's id, with when it was applied (seconds since the epoch)."""
    with psycopg.connect(url) as connection:
        rows = connection.execute("SELECT migration_id, applied_at_utc FROM _yoyo_migration")
        return {name: at.replace(tzinfo=UTC).timestamp() for name, at in rows}


def pages(
    client: httpx.Client, path: str, key: str, headers: dict[str, str]
) -> list[dict[str, Any]]:
    """Every item (under ``key``) of a listing, page after page."""
    items: list[dict[str, Any]] = []
    url: str | None = path
    while url is not None:
        answer = client.get(url, headers=headers)
        assert answer.status_code == 200, answer.text
        items += answer.json()[key]
        url = answer.links.get("next", {}).get("url")
    return items


def served_version(server: LiveServer) -> str:
    return str(httpx.get(f"{server.base_url}/openapi.json", timeout=30).json()["info"]["version"])


@pytest.mark.spec("C19 rolling-upgrade")
def test_the_previous_release_serves_beside_this_one_while_it_migrates(old_ecp, database, tmp_path):
    old_version, _ = previous_release()
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old_settings = SETTINGS | {"ECP_DATA_DIR": str(tmp_path / "old" / "data")}
    new_settings = SETTINGS | {"ECP_DATA_DIR": str(tmp_path / "new" / "data")}
    with contextlib.ExitStack() as stack:
        leaving = stack.enter_context(contextlib.ExitStack())  # the old release, stopped early
        old = leaving.enter_context(
            ecp_serve(database, tmp_path / "old", ecp=old_ecp, **old_settings)
        )
        assert served_version(old) == old_version
        token = old.token(TENANT, "admin")
        admin = {"Authorization": f"Bearer {token}"}
        assert httpx.post(f"{old.base_url}/v1/graphs", json=PAY_GRAPH, headers=admin).is_success
        deployment = {"deployment_ref": "pay", "graph_id": "pay"}
        made = httpx.post(f"{old.base_url}/v1/deployments", json=deployment, headers=admin)
        assert made.status_code == 201, made.text
        known = set(applied(database))
        waiting = [start_waiting(old, admin, f"waiting-{n}") for n in range(5)]

        readiness = Readiness(old.base_url)
        stack.callback(readiness.stop)
        load = Load(token, old.base_url)
        stack.callback(load.stop)
        load.until_acknowledged(10, "runs on the old release alone")
        new = stack.enter_context(ecp_serve(database, tmp_path / "new", **new_settings))
        assert served_version(new) == version() != old_version
        load.join(new.base_url)
        served = len(load.acknowledged)
        load.until_acknowledged(served + 20, "runs on both releases")
        until(lambda: readiness.latest() == "newer", "the old release reads a newer schema")
        readiness.stop()
        load.leave(old.base_url)
        old_answers = sum(n for (url, _), n in load.answers.items() if url == old.base_url)
        leaving.close()  # SIGTERM: the old release must exit 0
        stopped = len(load.acknowledged)
        load.until_acknowledged(stopped + 5, "runs after the old one left")
        load.stop()
        for _, approval_id in waiting:  # opened by the old release, approved by this one
            path = f"{new.base_url}/deployments/pay/approvals/{approval_id}/resolve"
            decided = httpx.post(path, json={"decision": "approve"}, headers=admin, timeout=30)
            assert decided.status_code == 200, decided.text
        verify(new, admin, [*load.acknowledged, *(run_id for run_id, _ in waiting)])

    assert not load.faults, load.faults[:5]
    assert old_answers >= 20
    newer = {name: at for name, at in applied(database).items() if name not in known}
    assert newer, "this build applied no migration: nothing was rolled"
    first, last = min(newer.values()), max(newer.values())
    seen = readiness.seen
    assert any(answered < first for _, answered, _, _ in seen)
    for sent, answered, status, schema in seen:
        if answered < first:
            assert (status, schema) == (200, "current"), (sent, answered, status, schema)
        if schema == "newer":
            assert status == 503
            assert answered > first, "newer before any newer migration was applied"
        if sent > last + SLACK_SECONDS:
            assert (status, schema) == (503, "newer"), (sent, last, status, schema)
        assert schema in {"current", "newer"}, schema


def start_waiting(server: LiveServer, admin: dict[str, str], key: str) -> tuple[str, str]:
    """A run started on ``server`` and left waiting for its approval: its id and the approval's."""
    body = {"deployment_ref": "pay", "input": {"key": key}}
    headers = admin | {"Idempotency-Key": key, "Prefer": "wait=10"}
    started = httpx.post(f"{server.base_url}/runs", json=body, headers=headers, timeout=30)
    assert started.status_code == 201, started.text
    run = started.json()
    assert run["status"] == "waiting_approval", run
    return run["run_id"], run["pending_approval_ids"][0]


def verify(server: LiveServer, admin: dict[str, str], acknowledged: list[str]) -> None:
    """Every acknowledged run completed once, no other run exists, and the chain verifies."""
    with httpx.Client(base_url=server.base_url, timeout=30) as client:

        def completed() -> bool:
            runs = pages(client, "/admin/runs?limit=200", "runs", admin)
            return all(run["status"] == "completed" for run in runs)

        until(completed, "every run completed")
        runs = pages(client, "/admin/runs?limit=200", "runs", admin)
        assert sorted(run["run_id"] for run in runs) == sorted(acknowledged)
        assert len(set(acknowledged)) == len(acknowledged)
        records = pages(client, "/deployments/pay/audits?limit=200", "records", admin)
        ends = Counter(r["run_id"] for r in records if r["node_id"] == "done")
        assert ends == Counter(acknowledged), "each run completes exactly once"
        verified = client.get("/deployments/pay/audits/verify", headers=admin).json()
        assert verified["verified"], verified
        assert verified["signature_verified"], verified
