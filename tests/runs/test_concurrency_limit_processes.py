"""A deployment's concurrency limit holds across two server processes on one database (ADR 0079).

``ecp serve --workers 2`` runs two server processes, each with four dispatch threads, on one
PostgreSQL database. A deployment limited to 5 runs at once gets 1,000 runs; each run makes two
``http_request`` calls to a receiver on 127.0.0.1 that takes a few milliseconds to answer, so a
run holds its slot across two transactions and is RUNNING in between. While they run, a thread
reads from the database every 10 ms how many of the deployment's runs hold a slot and how many
are RUNNING; the receiver counts the calls it is answering at once. None of the three may ever
exceed 5, and every run completes, each call made once.

Without the limit in the claim (a claim that admits whatever it picks), eight dispatch threads
would run up to eight runs at once and every one of the three counts would pass 5.
"""

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import psycopg
import pytest
from tests.server.test_serve_lifecycle import (
    data_dir,  # noqa: F401 - a fixture
    ecp_serve,  # noqa: F401 - a fixture
)
from tests.support.e2e import Caller, check

from ecp_http.server.auth import mint_token

pytestmark = [pytest.mark.integration, pytest.mark.spec("C14 limits-processes")]

RUNS = 1_000
LIMIT = 5
ANSWER_SECONDS = 0.003
WAIT_SECONDS = 300.0
JWT_SECRET = "l" * 40
REF = "limited"


class Gauge:
    """The most of something seen at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.total = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.total += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


@contextmanager
def slow_receiver() -> Iterator[tuple[str, Gauge]]:
    """An HTTP server on 127.0.0.1 answering each POST after a few ms, counting calls at once."""
    calls = Gauge()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            calls.enter()
            try:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                time.sleep(ANSWER_SECONDS)
                body = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            finally:
                calls.leave()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/work", calls
    finally:
        server.shutdown()
        server.server_close()


def calling_twice(url: str) -> dict:
    """``first`` and ``second`` each POST to ``url`` (two attempts with effects), then ``done``."""
    call = {
        "kind": "action",
        "action": {
            "name": "http_request",
            "fingerprint": "http_request/1",
            "capability_refs": ["network_write", "external_api_call"],
            "arguments": {"method": "POST", "url": url, "json": {}},
        },
    }
    return {
        "graph_id": "calls",
        "entry": "first",
        "nodes": [
            {"id": "first", **call},
            {"id": "second", **call},
            {"id": "done", "kind": "end"},
        ],
        "edges": [
            {"source": "first", "target": "second"},
            {"source": "second", "target": "done"},
        ],
    }


class Sampler(threading.Thread):
    """Reads, every 10 ms, how many of the deployment's runs hold a slot and how many run."""

    def __init__(self, database: str) -> None:
        super().__init__(daemon=True)
        self.database = database
        self.stop = threading.Event()
        self.samples: list[tuple[int, int]] = []

    def run(self) -> None:
        with psycopg.connect(self.database, autocommit=True) as conn:
            while not self.stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FILTER (WHERE holds_slot),"
                    " count(*) FILTER (WHERE status = 'RUNNING')"
                    " FROM ecp_runs WHERE tenant_id = 'acme' AND deployment_ref = %s",
                    (REF,),
                ).fetchone()
                assert row is not None
                self.samples.append((row[0], row[1]))
                self.stop.wait(0.01)


def completed(database: str) -> int:
    with psycopg.connect(database, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM ecp_runs WHERE tenant_id = 'acme' AND deployment_ref = %s"
            " AND status = 'COMPLETED'",
            (REF,),
        ).fetchone()
        assert row is not None
        return int(row[0])


def test_a_limit_of_5_holds_for_1000_runs_across_two_server_processes(
    ecp_serve,  # noqa: F811 - the fixture imported above
    data_dir,  # noqa: F811
    fresh_database,
):
    with slow_receiver() as (url, calls):
        served = ecp_serve(
            data_dir,
            "--port",
            "0",
            "--workers",
            "2",
            ECP_DATABASE_URL=fresh_database,
            ECP_JWT_SECRET=JWT_SECRET,
            ECP_DISPATCH_WORKERS="4",
            ECP_DISPATCH_POLL_SECONDS="0.05",
            ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS="true",
            ECP_LOG_LEVEL="WARNING",
        )
        base_url = served.wait_announced()
        token = mint_token(JWT_SECRET, tenant="acme", roles=["admin"])
        sampler = Sampler(fresh_database)
        with httpx.Client(base_url=base_url, timeout=30.0) as client:
            admin = Caller(client, {"Authorization": f"Bearer {token}"})
            check(admin.post("/v1/graphs", json=calling_twice(url)), 201)
            body = {"deployment_ref": REF, "graph_id": "calls", "max_concurrent_runs": LIMIT}
            assert check(admin.post("/v1/deployments", json=body), 201)["max_concurrent_runs"] == 5
            sampler.start()
            start = {"deployment_ref": REF, "input": {}}
            with ThreadPoolExecutor(4) as starters:  # httpx clients are thread-safe
                for started in starters.map(lambda _: admin.post("/runs", json=start), range(RUNS)):
                    check(started, 201)
            deadline = time.monotonic() + WAIT_SECONDS
            while (done := completed(fresh_database)) < RUNS:
                assert time.monotonic() < deadline, f"only {done} of {RUNS} runs completed"
                time.sleep(0.2)
        sampler.stop.set()
        sampler.join(timeout=10)

    holding = max(held for held, _ in sampler.samples)
    running = max(run for _, run in sampler.samples)
    assert len(sampler.samples) > 100, "the sampler hardly ran"
    assert holding <= LIMIT, f"{holding} runs held a slot at once"
    assert running <= LIMIT, f"{running} runs were RUNNING at once"
    assert calls.most <= LIMIT, f"{calls.most} calls were answered at once"
    assert calls.total == 2 * RUNS  # each call once: a run's attempts are never repeated
    assert holding == LIMIT, "the limit was never reached: the test proves nothing"
