"""While the database is away: 503 with Retry-After, never a 500; nothing acknowledged is lost.

The load test runs a dedicated embedded PostgreSQL (its own folder, outside pytest's) that it
stops and starts with ``pg_ctl`` the way an operator would (``-m fast``, then a crash restart with
``-m immediate``), under eight clients starting and approving runs against a real uvicorn on
127.0.0.1. The other tests kill sessions with ``pg_terminate_backend`` on the shared test server.
"""

import base64
import collections
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import psycopg
import pytest
import uvicorn
from starlette.testclient import TestClient
from tests.support.e2e import gated_action_graph
from tests.support.outage import PgCtl
from tests.support.runs import three_steps

from ecp_core import Ecp, Ed25519Signer
from ecp_core.errors import DatabaseUnavailable
from ecp_core.graphs.definition import GraphVersion
from ecp_core.registry.service import graph_digest
from ecp_http.background.dispatch import Dispatcher
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.server.problems import RETRY_AFTER_SECONDS
from ecp_http.startup.app import create_app
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

SECRET = "outage-" + "s" * 40
SIGNING_KEY = base64.b64encode(bytes(range(40, 72))).decode("ascii")
CLIENTS = 8
STOPPED_SECONDS = 5.0
RECOVERY_BOUND_SECONDS = 5.0
"""The issue's bound: the server serves again this soon after the database is back."""
POLL_DEADLINE_SECONDS = 60.0
REF = "gated"


def terminate_other_sessions(url: str) -> int:
    """Kill every other session on ``url``'s database, as an operator would; return how many."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def graph_version(tenant: str) -> GraphVersion:
    definition = three_steps()
    return GraphVersion(
        tenant_id=tenant,
        graph_id=definition.graph_id,
        version=1,
        digest=graph_digest(definition),
        definition=definition,
        created_at=datetime.now(UTC),
    )


def test_a_session_killed_under_a_read_is_database_unavailable(postgres_store, fresh_database):
    with pytest.raises(DatabaseUnavailable) as caught, postgres_store.unit_of_work() as uow:
        assert uow.graphs.latest("t", "g") is None
        assert terminate_other_sessions(fresh_database) >= 1
        uow.graphs.latest("t", "g")
    assert caught.value.code == "database_unavailable"
    assert caught.value.connection_lost
    assert isinstance(caught.value.__cause__, psycopg.OperationalError)
    with postgres_store.unit_of_work() as uow:  # a fresh, checked connection
        assert uow.graphs.latest("t", "g") is None


def test_a_session_killed_under_a_write_is_database_unavailable_and_nothing_is_kept(
    postgres_store, fresh_database
):
    with pytest.raises(DatabaseUnavailable) as caught, postgres_store.unit_of_work() as uow:
        uow.graphs.add(graph_version("t"))
        assert terminate_other_sessions(fresh_database) >= 1
        uow.commit()
    assert caught.value.connection_lost
    with postgres_store.unit_of_work() as uow:
        assert uow.graphs.latest("t", "g") is None


def test_stale_pooled_connections_are_dropped_before_they_are_handed_out(fresh_database):
    with PostgresStore(fresh_database, min_size=4, max_size=4) as store:
        store.pool.wait()
        assert terminate_other_sessions(fresh_database) == 4
        for tenant in ("t1", "t2", "t3", "t4", "t5", "t6"):
            with store.unit_of_work() as uow:
                uow.graphs.add(graph_version(tenant))
                uow.commit()
        with store.unit_of_work() as uow:
            assert uow.graphs.latest("t6", "g") is not None


def test_no_free_connection_within_the_wait_is_database_unavailable(fresh_database):
    with PostgresStore(fresh_database, max_size=1, timeout=0.2) as store:
        with store.unit_of_work(), pytest.raises(DatabaseUnavailable) as caught:  # noqa: SIM117
            with store.unit_of_work():
                pass
        assert not caught.value.connection_lost


def test_a_closed_pool_answers_503_with_retry_after(fresh_database):
    settings = Settings(
        database_url=fresh_database, jwt_secret=SECRET, audit_signing_key=SIGNING_KEY
    )
    token = mint_token(SECRET, tenant="t", roles=["admin"])
    app = create_app(settings, start_workers=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        client.app.state.runtime.store.pool.close()
        response = client.get("/runs/some-run", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == str(RETRY_AFTER_SECONDS)
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "database_unavailable"
    assert "pool" not in response.text.lower()


def count(caplog: pytest.LogCaptureFixture, message: str) -> int:
    return sum(record.getMessage() == message for record in caplog.records)


def wait_for(condition, seconds: float = POLL_DEADLINE_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_background_threads_log_an_outage_once_and_its_end(fresh_database, caplog):
    caplog.set_level(logging.INFO, logger="ecp_http.dispatch")
    with PostgresStore(fresh_database, max_size=1, timeout=0.1) as store:
        ecp = Ecp.build(store.unit_of_work, signer=Ed25519Signer(bytes(32), key_id="k"))
        dispatcher = Dispatcher(
            ecp.runs,
            workers=2,
            poll_seconds=0.01,
            sweeps=[("escalate_overdue_approvals", ecp.approvals.escalate_overdue, 0.01)],
        )
        try:
            with store.unit_of_work():  # holds the only connection: every thread finds none
                dispatcher.start()
                time.sleep(2.0)  # several polls per thread fail meanwhile
                assert count(caplog, "database unavailable") == 1
            wait_for(lambda: count(caplog, "database available again") == 1)
            time.sleep(0.3)
        finally:
            dispatcher.stop()
    assert count(caplog, "database unavailable") == 1
    assert count(caplog, "database available again") == 1
    assert not [r for r in caplog.records if r.exc_info is not None]


# --- the load test: a real server, a real PostgreSQL stopped and crash-restarted -------------


class Load:
    """Clients that start runs and approve them, retrying each 503 as told, and what they saw."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        self.base_url = base_url
        self.headers = headers
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.statuses: collections.Counter[int] = collections.Counter()
        self.wrong: list[str] = []
        self.acknowledged: list[str] = []
        self.approved: list[str] = []

    def call(self, client: httpx.Client, method: str, path: str, ok: set[int], **kwargs):
        """Send until the answer is not a 503; return it and whether a 503 came first."""
        answered_503 = False
        while True:
            response = client.request(method, path, headers=self.headers, **kwargs)
            with self.lock:
                self.statuses[response.status_code] += 1
            if response.status_code != 503:
                if response.status_code not in ok:
                    self.wrong.append(f"{method} {path}: {response.status_code} {response.text}")
                    raise AssertionError(self.wrong[-1])
                return response, answered_503
            answered_503 = True
            if (
                response.headers.get("retry-after") != str(RETRY_AFTER_SECONDS)
                or response.json().get("code") != "database_unavailable"
            ):
                self.wrong.append(f"{method} {path}: 503 {response.headers} {response.text}")
            time.sleep(0.1)  # sooner than Retry-After, to see the recovery

    def one_run(self, client: httpx.Client, number: int) -> None:
        body = {"deployment_ref": REF, "input": {"n": number}, "idempotency_key": uuid.uuid4().hex}
        started, _ = self.call(client, "POST", "/runs", {200, 201}, json=body)
        run_id = started.json()["run_id"]
        with self.lock:
            self.acknowledged.append(run_id)
        deadline = time.monotonic() + POLL_DEADLINE_SECONDS
        while True:
            run = self.call(client, "GET", f"/runs/{run_id}", {200})[0].json()
            if run["status"] == "waiting_approval":
                break
            assert time.monotonic() < deadline, f"run {run_id} stayed {run['status']}"
            time.sleep(0.05)
        path = f"/deployments/{REF}/approvals/{run['pending_approval_ids'][0]}/resolve"
        resolved, after_503 = self.call(
            client, "POST", path, {200, 409}, json={"decision": "approve", "reason": "ok"}
        )
        if resolved.status_code == 409:
            assert after_503, resolved.text
            assert resolved.json()["code"] == "approval_already_resolved"
        with self.lock:
            self.approved.append(run_id)

    def client(self, index: int) -> None:
        with httpx.Client(base_url=self.base_url, timeout=60.0) as client:
            number = 0
            while not self.stop.is_set():
                try:
                    self.one_run(client, index * 10_000 + number)
                except AssertionError as exc:
                    with self.lock:
                        self.wrong.append(f"client {index}: {exc}")
                    return
                number += 1


@pytest.fixture
def outage_server(outage_database) -> Iterator[tuple[str, PgCtl]]:
    """ECP under uvicorn on 127.0.0.1 over that database; yields its base URL and the pg_ctl."""
    url, pg_ctl = outage_database
    settings = Settings(
        database_url=url,
        jwt_secret=SECRET,
        audit_signing_key=SIGNING_KEY,
        dispatch_workers=2,
        dispatch_poll_seconds=0.05,
        database_pool_timeout_seconds=2.0,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    config = uvicorn.Config(
        create_app(settings), host=host, port=port, lifespan="on", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base_url = f"http://{host}:{port}"
    try:
        with httpx.Client(base_url=base_url) as probe:
            wait_for(lambda: server.started and live(probe), seconds=30.0)
        yield base_url, pg_ctl
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()
    assert not thread.is_alive()


def live(client: httpx.Client) -> bool:
    try:
        return client.get("/health/live").status_code == 200
    except httpx.TransportError:
        return False


def seconds_until_served(client: httpx.Client, path: str, headers: dict[str, str]) -> float:
    """From now (the database just returned) until ``path`` answers 200 again."""
    returned = time.monotonic()
    deadline = returned + POLL_DEADLINE_SECONDS
    while client.get(path, headers=headers).status_code != 200:
        assert time.monotonic() < deadline, f"not served {POLL_DEADLINE_SECONDS:.0f} s after"
        time.sleep(0.05)
    return time.monotonic() - returned


def test_stopped_and_crash_restarted_database_gives_503s_and_loses_nothing(outage_server, caplog):
    caplog.set_level(logging.INFO, logger="ecp_http.dispatch")
    base_url, pg_ctl = outage_server
    token = mint_token(SECRET, tenant="outage", roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, timeout=60.0) as admin:
        graph = admin.post("/v1/graphs", json=gated_action_graph(), headers=headers)
        assert graph.status_code == 201, graph.text
        deployed = admin.post(
            "/v1/deployments",
            json={"deployment_ref": REF, "graph_id": "gated-refund"},
            headers=headers,
        )
        assert deployed.status_code == 201, deployed.text

        load = Load(base_url, headers)
        clients = [
            threading.Thread(target=load.client, args=(index,), daemon=True)
            for index in range(CLIENTS)
        ]
        for thread in clients:
            thread.start()
        recovery: dict[str, float] = {}
        try:
            wait_for(lambda: len(load.approved) >= CLIENTS)
            probe = f"/runs/{load.acknowledged[0]}"

            pg_ctl.stop_fast()
            time.sleep(STOPPED_SECONDS)
            pg_ctl.start()
            recovery["stop -m fast"] = seconds_until_served(admin, probe, headers)

            approved = len(load.approved)
            wait_for(lambda: len(load.approved) >= approved + CLIENTS)
            pg_ctl.crash_restart()
            recovery["restart -m immediate"] = seconds_until_served(admin, probe, headers)

            approved = len(load.approved)
            wait_for(lambda: len(load.approved) >= approved + CLIENTS)
        finally:
            load.stop.set()
            for thread in clients:
                thread.join(POLL_DEADLINE_SECONDS)

        print(f"statuses {dict(load.statuses)}; served again after {recovery}")  # noqa: T201
        assert not load.wrong, load.wrong
        assert load.statuses[500] == 0
        assert load.statuses[503] > 0, "the outages were not seen"
        for what, seconds in recovery.items():
            assert seconds <= RECOVERY_BOUND_SECONDS, f"{what}: served again after {seconds:.2f} s"

        assert sorted(load.approved) == sorted(load.acknowledged)
        for run_id in load.acknowledged:  # every acknowledged run completes once, its chain whole
            deadline = time.monotonic() + POLL_DEADLINE_SECONDS
            while (run := admin.get(f"/runs/{run_id}", headers=headers).json())["status"] not in {
                "completed",
                "failed",
                "cancelled",
            }:
                assert time.monotonic() < deadline, f"run {run_id} stayed {run['status']}"
                time.sleep(0.05)
            assert run["status"] == "completed", run
            verified = admin.get(f"/runs/{run_id}/audit/verify", headers=headers).json()
            assert verified["verified"] is True, verified
            timeline = admin.get(f"/runs/{run_id}/timeline", headers=headers).json()
            attempts = [entry["attempt"] for entry in timeline["entries"]]
            assert attempts == list(range(1, len(attempts) + 1)), timeline

    # One line per outage, not per failed try (there are hundreds of those). Two outages are
    # induced; a crash restart seen by a try that reached the server between the crash and the
    # restart on a loaded machine is honestly a third.
    assert 1 <= count(caplog, "database unavailable") <= 3
    assert count(caplog, "database available again") == count(caplog, "database unavailable")
    assert not [r for r in caplog.records if r.name == "ecp_http.dispatch" and r.exc_info]
