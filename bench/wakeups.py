"""Wake-ups by LISTEN/NOTIFY (ADR 0063): latencies with notifications on and off, and their cost.

Run as ``python bench/wakeups.py [--runs N] [--clients C] [--rounds R] [--commit-runs M]``. It
prints figures and checks only that what it got is correct, never anything about timing. The
database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance database) when set, else an embedded
PostgreSQL; every database it uses is fresh, migrated and dropped at the end.

1. **Latency through HTTP**, four contenders, each on a database of its own: one or two ECP
   server processes (this script run again with ``--serve``, ``ecp serve``'s default settings)
   with ``ECP_DISPATCH_NOTIFY`` true or false. ``--clients`` client threads start runs of the
   example graph (``ecp_core.demo``) with ``POST /runs`` and ``Prefer: wait=10`` (alternating between
   the contender's servers), which answers at ``waiting_approval``; then approve it, which ends
   the run and queues a ``run.completed`` webhook to a receiver on 127.0.0.1. Printed: p50 and
   p99 of start -> ``waiting_approval`` as the client sees it, and of the webhook's delay (its
   ``occurred_at`` to the receiver seeing the first attempt). Contenders take turns in
   ``--rounds`` rounds with a rotating order.
2. **What NOTIFY costs**: PostgreSQL serialises the commits of transactions that notified. The
   in-process run of ``postgres_audit.py`` (start, drive to the approval, approve: four signed
   records) by 1 and by ``--clients`` threads, with the notifying triggers enabled and disabled
   on the same database (a listener connected throughout), in alternating rounds.
3. **The ceiling**: bare ``INSERT`` + ``COMMIT`` by 1 and ``--clients`` threads into a table
   with a notifying trigger enabled and disabled: notifying commits cannot share a WAL flush.
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import psycopg

from _database import Databases, server
from _notify_cost import bench_commit_ceiling, bench_commits
from _rounds import load_note, percentile
from _server import Child, ecp_app, serve
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.server.auth import mint_token

TENANT = "bench"
DEPLOYMENT = "refunds"
JWT_SECRET = "bench-" + "w" * 40
SIGNING_KEY = base64.b64encode(bytes(range(11, 43))).decode("ascii")


def ms(values: list[float], share: float) -> str:
    return f"{percentile(values, share) * 1e3:7.1f} ms" if values else "    n/a"


# -- the webhook receiver -------------------------------------------------------------------------


class Arrivals:
    """First attempts the receiver saw, by contender (the last path segment)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_contender: dict[str, list[tuple[float, dict[str, Any]]]] = {}

    def receiver(self) -> ThreadingHTTPServer:
        arrivals = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                arrived = time.time()
                with arrivals.lock:
                    arrivals.by_contender.setdefault(self.path.rsplit("/", 1)[1], []).append(
                        (arrived, json.loads(body))
                    )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


# -- part 1: latency through HTTP -----------------------------------------------------------------


class Contender:
    """One or two server processes on one database, notifications on or off."""

    def __init__(self, processes: int, notify: bool, url: str) -> None:  # noqa: FBT001
        self.name = f"{processes} process{'es' if processes > 1 else ''}, notify {'on' if notify else 'off'}"
        self.key = f"p{processes}-{'on' if notify else 'off'}"
        self.url = url
        env = {
            "ECP_DATABASE_URL": url,
            "ECP_JWT_SECRET": JWT_SECRET,
            "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            "ECP_DISPATCH_NOTIFY": "true" if notify else "false",
            "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
            "ECP_CLOUD_SCHEDULER_ENABLED": "false",
            "ECP_LOG_LEVEL": "WARNING",
        }
        self.servers: list[Child] = []
        for _ in range(processes):
            self.servers.append(Child(__file__, env))
        self.start_latency: list[float] = []
        self.completed = 0
        self.problems: list[str] = []
        self.lock = threading.Lock()

    def prepare(self, headers: dict[str, str], hook_url: str) -> None:
        with httpx.Client(base_url=self.servers[0].base_url, headers=headers, timeout=30) as http:
            for path, body in (
                ("/v1/graphs", EXAMPLE_GRAPH),
                (
                    "/v1/deployments",
                    {"deployment_ref": DEPLOYMENT, "graph_id": EXAMPLE_GRAPH["graph_id"]},
                ),
                (
                    "/webhooks/subscriptions",
                    {
                        "deployment_ref": DEPLOYMENT,
                        "target_url": f"{hook_url}/{self.key}",
                        "event_types": ["run.completed"],
                    },
                ),
            ):
                answer = http.post(path, json=body)
                if answer.status_code != 201:
                    raise RuntimeError(f"POST {path}: {answer.status_code} {answer.text}")

    def client(self, headers: dict[str, str], count: int, first: int) -> None:
        clients = [
            httpx.Client(base_url=s.base_url, headers=headers, timeout=30) for s in self.servers
        ]
        try:
            for index in range(count):
                http = clients[(first + index) % len(clients)]
                began = time.perf_counter()
                started = http.post(
                    "/runs",
                    json={"deployment_ref": DEPLOYMENT, "input": {"order": f"W-{index}"}},
                    headers={"Prefer": "wait=10"},
                )
                seconds = time.perf_counter() - began
                run = started.json()
                if started.status_code != 201 or run.get("status") != "waiting_approval":
                    self.problems.append(f"POST /runs: {started.status_code} {started.text[:200]}")
                    continue
                resolved = http.post(
                    f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
                    json={"decision": "approve"},
                )
                if resolved.status_code != 200 or resolved.json()["run"]["status"] != "completed":
                    self.problems.append(f"resolve: {resolved.status_code} {resolved.text[:200]}")
                    continue
                with self.lock:
                    self.start_latency.append(seconds)
                    self.completed += 1
        finally:
            for http in clients:
                http.close()

    def round(self, headers: dict[str, str], runs: int, clients: int) -> None:
        share = -(-runs // clients)
        with ThreadPoolExecutor(clients) as pool:
            for future in [pool.submit(self.client, headers, share, i) for i in range(clients)]:
                future.result()

    def stop(self) -> None:
        for child in self.servers:
            child.stop()


def check_contender(contender: Contender, arrivals: list[tuple[float, dict[str, Any]]]) -> None:
    """Every run completed exactly once in the database, and one first attempt per run."""
    with psycopg.connect(contender.url) as conn:
        row = conn.execute("SELECT count(*) FROM ecp_runs WHERE status = 'COMPLETED'").fetchone()
    stored = row[0] if row else 0
    events = {payload["event_id"] for _, payload in arrivals}
    if contender.problems or stored != contender.completed or len(events) != contender.completed:
        raise SystemExit(
            f"{contender.name}: {contender.completed} runs answered, {stored} completed in the "
            f"database, {len(events)} distinct deliveries; problems: {contender.problems[:3]}"
        )


def bench_latency(databases: Databases, args: argparse.Namespace) -> None:
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    arrivals = Arrivals()
    receiver = arrivals.receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook_url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    contenders: list[Contender] = []
    try:
        for processes in (1, 2):
            for notify in (False, True):
                _, url = databases.fresh(f"p{processes}{'on' if notify else 'off'}")
                contenders.append(Contender(processes, notify, url))
                contenders[-1].prepare(headers, hook_url)
        for contender in contenders:  # warm-up: its latencies are not counted
            contender.round(headers, 2 * args.clients, args.clients)
            contender.start_latency.clear()
        print(
            f"\n1. start -> waiting_approval with Prefer: wait, {args.clients} clients, "
            f"~{args.runs} runs per contender in {args.rounds} interleaved rounds"
        )
        for index in range(args.rounds):
            order = contenders[index % len(contenders) :] + contenders[: index % len(contenders)]
            for contender in order:
                contender.round(headers, max(1, args.runs // args.rounds), args.clients)
        deadline = time.monotonic() + 30
        expected = sum(c.completed for c in contenders)  # the warm-up's runs included
        while time.monotonic() < deadline:
            with arrivals.lock:
                if sum(len(v) for v in arrivals.by_contender.values()) >= expected:
                    break
            time.sleep(0.05)
    finally:
        for contender in contenders:
            contender.stop()
        receiver.shutdown()
    print(
        f"  {'contender':<26} {'start p50':>10} {'start p99':>10} {'webhook p50':>12} {'webhook p99':>12}"
    )
    for contender in contenders:
        got = arrivals.by_contender.get(contender.key, [])
        check_contender(contender, got)
        delays = [a - datetime.fromisoformat(p["occurred_at"]).timestamp() for a, p in got]
        print(
            f"  {contender.name:<26} {ms(contender.start_latency, 0.5):>10} "
            f"{ms(contender.start_latency, 0.99):>10} {ms(delays, 0.5):>12} {ms(delays, 0.99):>12}"
        )
    print("  (every run completed once in its database; one first delivery attempt per run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400, help="runs per contender, part 1 (400)")
    parser.add_argument("--clients", type=int, default=4, help="client threads (4)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (4)")
    parser.add_argument(
        "--commit-runs", type=int, default=400, help="runs per contender, part 2 (400)"
    )
    parser.add_argument(
        "--commits", type=int, default=400, help="commits per contender and round, part 3 (400)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    print(f"wake-ups benchmark; {load_note()}")
    with server() as maintenance:
        databases = Databases(maintenance)
        try:
            bench_latency(databases, args)
            bench_commits(databases, args)
            bench_commit_ceiling(databases, args)
        finally:
            databases.drop_all()
    print(f"\n({load_note()} at the end: other processes' load makes the figures noisy)")


if __name__ == "__main__":
    main()
