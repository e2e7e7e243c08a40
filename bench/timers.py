"""Timers (ADR 0078): how late waiting runs wake, across a SIGKILL of the server.

Run as ``python bench/timers.py [--runs N] [--clients C]``. It prints figures and checks only
that what it got is correct (every run wakes and completes, none wakes before its due time),
never anything about timing. The database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance
database) when set, else an embedded PostgreSQL; the database it uses is fresh, migrated and
dropped at the end.

One ECP server process (this script run again with ``--serve``, ``ecp serve``'s default
settings) on a fresh database; three deployments whose graph is ``nap`` (a wait node of 1, 2 or 3
seconds) then ``done``. ``--clients`` client threads start ``--runs`` runs with ``POST /runs``,
round robin over the three; each answers ``waiting_timer``. Half-way through the starts the
server is killed with SIGKILL and a new one started on the same database; the clients retry the
starts the dead server did not answer (with their idempotency key, so none is started twice).
Then every run must complete.

Printed, from each run's audit records (``wait_until`` and ``woke_at`` of its wake):

- lateness (``woke_at - wait_until``) of the runs the outage did not hold up: p50, p99 and
  max, against the poll interval (``ECP_TIMER_POLL_SECONDS``), what a wake by polling alone
  would be late by at worst;
- the runs the outage held up (due before the new server answered, woken after): how long after
  the new server answered they woke;
- how long a woken run took to complete (its end record after its wake).
"""

from __future__ import annotations

import argparse
import base64
import os
import pathlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import httpx
import psycopg

from _database import Databases, server
from _rounds import load_note, percentile
from _server import Child, ecp_app, serve
from ecp_http.config.table.runs import TIMER_POLL_SECONDS
from ecp_http.server.auth import mint_token

TENANT = "bench"
JWT_SECRET = "bench-" + "t" * 40
SIGNING_KEY = base64.b64encode(bytes(range(21, 53))).decode("ascii")
WAITS = (1, 2, 3)


def figures(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {percentile(values, 0.5) * 1e3:7.1f} ms, p99 {percentile(values, 0.99) * 1e3:7.1f} ms,"
        f" max {max(values) * 1e3:7.1f} ms ({len(values)} runs)"
    )


def graph(seconds: int) -> dict[str, Any]:
    return {
        "graph_id": f"nap-{seconds}",
        "entry": "nap",
        "nodes": [{"id": "nap", "kind": "wait", "seconds": seconds}, {"id": "done", "kind": "end"}],
        "edges": [{"source": "nap", "target": "done"}],
    }


class Servers:
    """The one server process of the moment; :meth:`kill_and_restart` replaces it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.current = Child(__file__, env)
        self.killed_at = 0.0
        self.back_at = 0.0
        self.lock = threading.Lock()

    def base_url(self) -> str:
        with self.lock:
            return self.current.base_url

    def kill_and_restart(self) -> None:
        """SIGKILL the server, start another on the same database; note when each happened."""
        with self.lock:
            dead = self.current
            self.killed_at = time.time()
            dead.process.kill()
            dead.process.wait()
            self.current = Child(__file__, self.env)
            self.back_at = time.time()
        if dead.process.stdout is not None:
            dead.process.stdout.close()
        dead.log.close()
        pathlib.Path(dead.log.name).unlink()

    def stop(self) -> None:
        self.current.stop()


class Starts:
    """Client threads starting runs; :attr:`half` is set once half of them answered."""

    def __init__(self, servers: Servers, headers: dict[str, str], runs: int) -> None:
        self.servers = servers
        self.headers = headers
        self.runs = runs
        self.answered = 0
        self.half = threading.Event()
        self.lock = threading.Lock()

    def start(self, keys: list[str]) -> None:
        """Start a run for each key (round robin over the waits), retrying while no server runs.

        The idempotency key makes a retry of a start the dead server committed answer that run.
        """
        client: httpx.Client | None = None
        url = ""
        for key in keys:
            index = int(key.rsplit("-", 1)[1])
            body = {"deployment_ref": f"nap-{WAITS[index % len(WAITS)]}", "idempotency_key": key}
            while True:
                if client is None or url != self.servers.base_url():
                    if client is not None:
                        client.close()
                    url = self.servers.base_url()
                    client = httpx.Client(base_url=url, headers=self.headers, timeout=30)
                try:
                    answer = client.post("/runs", json=body)
                except httpx.TransportError:
                    time.sleep(0.05)
                    continue
                if answer.status_code not in {200, 201}:
                    raise SystemExit(f"POST /runs: {answer.status_code} {answer.text}")
                break
            with self.lock:
                self.answered += 1
                if self.answered == self.runs // 2:
                    self.half.set()
        if client is not None:
            client.close()


def wakes(url: str) -> list[tuple[datetime, datetime, datetime | None]]:
    """(wait_until, woke_at, ended) of each run's wake, from its audit records."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT w.execution_metadata->>'wait_until', w.execution_metadata->>'woke_at',"
            " e.created_at"
            " FROM ecp_audit_records w LEFT JOIN ecp_audit_records e"
            " ON e.run_id = w.run_id AND e.node_id = 'done'"
            " WHERE w.node_id = 'nap' AND w.status = 'succeeded'"
        ).fetchall()
    return [
        (datetime.fromisoformat(due), datetime.fromisoformat(woke), ended)
        for due, woke, ended in rows
    ]


def completed(url: str, runs: int, seconds: float) -> dict[str, int]:
    """Runs by status once all ``runs`` completed, or after ``seconds``."""
    deadline = time.time() + seconds
    while True:
        with psycopg.connect(url) as conn:
            counts = dict(
                conn.execute("SELECT status, count(*) FROM ecp_runs GROUP BY status").fetchall()
            )
        if counts.get("COMPLETED", 0) == runs or time.time() > deadline:
            return counts
        time.sleep(0.25)


def deploy(base_url: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as http:
        for seconds in WAITS:
            deployment = {"deployment_ref": f"nap-{seconds}", "graph_id": f"nap-{seconds}"}
            for path, body in (("/v1/graphs", graph(seconds)), ("/v1/deployments", deployment)):
                answer = http.post(path, json=body)
                if answer.status_code != 201:
                    raise SystemExit(f"POST {path}: {answer.status_code} {answer.text}")


def start_with_a_kill(servers: Servers, starts: Starts, clients: int) -> float:
    """Start every run from ``clients`` threads, killing the server half-way; seconds taken."""
    keys = [f"run-{index}" for index in range(starts.runs)]
    began = time.time()
    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(starts.start, keys[i::clients]) for i in range(clients)]
        while not starts.half.wait(0.1):
            for future in futures:
                if future.done():
                    future.result()  # a client that failed says why
        servers.kill_and_restart()
        for future in futures:
            future.result()
    return time.time() - began


def report(url: str, runs: int, servers: Servers) -> None:
    """Check every run woke, none early, and completed; print the lateness figures."""
    counts = completed(url, runs, 120)
    print(f"  runs by status: {counts}")
    found = wakes(url)
    if len(found) != runs or counts.get("COMPLETED", 0) != runs:
        raise SystemExit(f"{len(found)} of {runs} runs woke; by status {counts}")
    early = sum(1 for due, woke, _ in found if woke < due)
    if early:
        raise SystemExit(f"{early} runs woke before their due time")
    back = servers.back_at
    served, held_up, to_end = [], [], []
    for due, woke, ended in found:
        if due.timestamp() < back <= woke.timestamp():  # the outage held it up
            held_up.append(woke.timestamp() - back)
        else:
            served.append((woke - due).total_seconds())
        if ended is not None:
            to_end.append((ended - woke).total_seconds())
    poll = float(os.environ.get(TIMER_POLL_SECONDS.name, TIMER_POLL_SECONDS.default))
    print(f"  lateness, not held up by the outage: {figures(served)}")
    if served:
        ratio = percentile(served, 0.99) / poll
        print(f"  p99 / poll interval ({poll * 1e3:.0f} ms, a wake by polling alone): {ratio:.2f}")
    print(f"  held up by the outage, woke after the restart answered: {figures(held_up)}")
    print(f"  woken -> completed:                  {figures(to_end)}")
    print("  none woke before its due time; every run completed")


def bench(databases: Databases, args: argparse.Namespace) -> None:
    _, url = databases.fresh("timers")
    env = {
        "ECP_DATABASE_URL": url,
        "ECP_JWT_SECRET": JWT_SECRET,
        "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
        "ECP_CLOUD_SCHEDULER_ENABLED": "false",
        "ECP_LOG_LEVEL": "WARNING",
    }
    headers = {"Authorization": f"Bearer {mint_token(JWT_SECRET, tenant=TENANT, roles=['admin'])}"}
    servers = Servers(env)
    try:
        deploy(servers.base_url(), headers)
        took = start_with_a_kill(servers, Starts(servers, headers, args.runs), args.clients)
        print(
            f"  {args.runs} runs started in {took:.1f} s ({args.runs / took:.0f}/s); the server"
            f" was SIGKILLed after {args.runs // 2} and answered again"
            f" {servers.back_at - servers.killed_at:.1f} s later"
        )
        report(url, args.runs, servers)
    finally:
        servers.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    print(f"timers benchmark; {load_note()}")
    with server() as maintenance:
        databases = Databases(maintenance)
        try:
            bench(databases, args)
        finally:
            databases.drop_all()


if __name__ == "__main__":
    main()
