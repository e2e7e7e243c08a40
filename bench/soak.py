"""A bounded soak: mixed traffic against one ECP server for ``--minutes``, its resources per minute.

Run as ``python bench/soak.py [--minutes M] [--clients C]``. The server is this script run again
as a child process (``--serve``) on a fresh database (``ECP_BENCH_DATABASE_URL`` or an embedded
PostgreSQL). The traffic, all at once:

- ``--clients`` loops starting the example graph's runs (``Prefer: wait``) and approving them;
- a loop starting runs of a task graph and a worker loop claiming and completing their tasks;
- a webhook subscription on every run's completion, delivered to a receiver in this process;
- a loop posting batches of 50 execution evidence events.

Every minute it prints the server's resident memory, threads and open file descriptors (Linux
``/proc``), the database's connections, and the minute's request count and p99 latency. At the
end, each resource's least-squares slope per hour over the second half of the run (after the
warm-up) and whether it stays within its bound (memory 5 % of its level, the rest 0): nothing
may grow without bound. It checks only that the answers are right (every run completes, every
webhook arrives, the audit trail verifies), never anything about timing.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import http.server
import pathlib
import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg

import _database
from _rounds import load_note, percentile
from _run_loop import DEPLOYMENT, check, prepare
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

JWT_SECRET = "soak-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(32))).decode("ascii")
TENANT = "soak"
TASK_GRAPH = {
    "graph_id": "charge",
    "entry": "charge",
    "nodes": [
        {
            "id": "charge",
            "kind": "task",
            "action": {
                "name": "payments.charge",
                "fingerprint": "payments.charge/1",
                "arguments": {"amount": "1.00"},
                "capability_refs": [],
                "side_effect": "idempotent",
            },
            "lock_seconds": 30,
        },
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "charge", "target": "done"}],
}


@dataclass
class Traffic:
    """What the loops did: latencies by minute, counts, and the first wrong answer."""

    started: float = field(default_factory=time.monotonic)
    latencies: dict[int, list[float]] = field(default_factory=dict)
    runs: int = 0
    tasks: int = 0
    evidence: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, client: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
        began = time.perf_counter()
        answer = client.request(method, url, **kwargs)
        spent = time.perf_counter() - began
        minute = int((time.monotonic() - self.started) // 60)
        with self.lock:
            self.latencies.setdefault(minute, []).append(spent)
        if answer.status_code >= 400:
            self.problems.append(f"{method} {url}: {answer.status_code} {answer.text[:200]}")
        return answer


def approvals(
    base_url: str, headers: dict[str, str], traffic: Traffic, stop: threading.Event
) -> None:
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
        while not stop.is_set():
            body = {"deployment_ref": DEPLOYMENT, "input": {"order": uuid.uuid4().hex}}
            run = traffic.timed(client, "POST", "/runs", json=body, headers={"Prefer": "wait=10"})
            if run.status_code != 201:
                continue
            approval = run.json()["pending_approval_ids"][0]
            path = f"/deployments/{DEPLOYMENT}/approvals/{approval}/resolve"
            if traffic.timed(client, "POST", path, json={"decision": "approve"}).status_code == 200:
                with traffic.lock:
                    traffic.runs += 1


def tasks(base_url: str, headers: dict[str, str], traffic: Traffic, stop: threading.Event) -> None:
    worker = {
        "Authorization": "Bearer "
        + mint_token(JWT_SECRET, tenant=TENANT, roles=["worker"], ttl_seconds=7200)
    }
    claim = {"worker_id": "soak", "topics": ["payments.charge"], "max_tasks": 10, "wait_seconds": 1}
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
        while not stop.is_set():
            traffic.timed(client, "POST", "/runs", json={"deployment_ref": "charge", "input": {}})
            got = traffic.timed(client, "POST", "/v1/tasks/claim", json=claim, headers=worker)
            for task in got.json().get("tasks", []) if got.status_code == 200 else []:
                done = {"lock_token": task["lock_token"], "output": {"charged": True}}
                path = f"/v1/tasks/{task['task_id']}/complete"
                if (
                    traffic.timed(client, "POST", path, json=done, headers=worker).status_code
                    == 200
                ):
                    with traffic.lock:
                        traffic.tasks += 1


def evidence(
    base_url: str, headers: dict[str, str], traffic: Traffic, stop: threading.Event
) -> None:
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
        while not stop.is_set():
            now = datetime.now(UTC).isoformat()
            events = [
                {
                    "event_id": uuid.uuid4().hex,
                    "workflow_id": "refund-triage",
                    "workflow_version": "refund-triage@1",
                    "occurred_at": now,
                    "charge_id": uuid.uuid4().hex,
                    "cost_usd": "0.0042",
                    "cost_measurement": "measured",
                }
                for _ in range(50)
            ]
            answer = traffic.timed(
                client, "POST", "/v1/evidence/executions", json={"events": events}
            )
            if answer.status_code == 200:
                with traffic.lock:
                    traffic.evidence += 50
            stop.wait(0.5)


class Receiver(http.server.BaseHTTPRequestHandler):
    """Counts webhook deliveries."""

    received = 0
    guard = threading.Lock()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with Receiver.guard:
            Receiver.received += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        """Quiet."""


@dataclass
class Sample:
    minute: int
    rss_mib: float
    threads: int
    fds: int
    connections: int
    requests: int
    p99_ms: float


def sample(child: Child, url: str, minute: int, traffic: Traffic) -> Sample:
    proc = pathlib.Path(f"/proc/{child.process.pid}")
    status = {
        line.split(":")[0]: line.split(":", 1)[1].strip()
        for line in (proc / "status").read_text(encoding="ascii").splitlines()
    }
    fds = sum(1 for _ in (proc / "fd").iterdir())
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchone()
    with traffic.lock:
        spent = list(traffic.latencies.get(minute, []))
    return Sample(
        minute=minute + 1,
        rss_mib=int(status["VmRSS"].split()[0]) / 1024,
        threads=int(status["Threads"]),
        fds=fds,
        connections=int(row[0]) - 1 if row else 0,
        requests=len(spent),
        p99_ms=percentile(spent, 0.99) * 1e3 if spent else 0.0,
    )


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``(minute, value)`` points, per hour."""
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return 0.0 if spread == 0 else 60 * sum((x - mx) * (y - my) for x, y in points) / spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20, help="how long (default 20)")
    parser.add_argument("--clients", type=int, default=3, help="approval loops (default 3)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=7200)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"soak of {args.minutes} minutes; {load_note()}")
    with _database.server() as maintenance:
        databases = _database.Databases(maintenance)
        try:
            _, url = databases.fresh("soak")
            soak(url, headers, args)
        finally:
            databases.drop_all()


def soak(url: str, headers: dict[str, str], args: argparse.Namespace) -> None:
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    env = {
        "ECP_DATABASE_URL": url,
        "ECP_JWT_SECRET": JWT_SECRET,
        "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
        "ECP_LOG_LEVEL": "WARNING",
        "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
    }
    child = Child(__file__, env)
    samples: list[Sample] = []
    try:
        with httpx.Client(base_url=child.base_url, headers=headers, timeout=30) as client:
            prepare(client)
            check(client.post("/v1/graphs", json=TASK_GRAPH), 201)
            check(
                client.post(
                    "/v1/deployments", json={"deployment_ref": "charge", "graph_id": "charge"}
                ),
                201,
            )
            hook = {
                "deployment_ref": DEPLOYMENT,
                "target_url": f"http://127.0.0.1:{receiver.server_address[1]}/hook",
                "event_types": ["run.completed"],
            }
            check(client.post("/webhooks/subscriptions", json=hook), 201)
        traffic, stop = Traffic(), threading.Event()
        loops = [approvals] * args.clients + [tasks, evidence]
        with concurrent.futures.ThreadPoolExecutor(len(loops)) as pool:
            futures = [pool.submit(loop, child.base_url, headers, traffic, stop) for loop in loops]
            print(
                f"\n{'minute':>6} {'RSS MiB':>8} {'threads':>7} {'fds':>5} {'conns':>5} {'requests':>8} {'p99 ms':>7}"
            )
            for minute in range(args.minutes):
                time.sleep(max(0.0, traffic.started + 60 * (minute + 1) - time.monotonic()))
                taken = sample(child, url, minute, traffic)
                samples.append(taken)
                print(
                    f"{taken.minute:>6} {taken.rss_mib:>8.1f} {taken.threads:>7} {taken.fds:>5}"
                    f" {taken.connections:>5} {taken.requests:>8} {taken.p99_ms:>7.1f}",
                    flush=True,
                )
            stop.set()
            for future in futures:
                future.result()
        report(child, samples, traffic, headers)
    finally:
        child.stop()
        receiver.shutdown()


def report(child: Child, samples: list[Sample], traffic: Traffic, headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 60
    while Receiver.received < traffic.runs and time.monotonic() < deadline:
        time.sleep(0.2)
    with httpx.Client(base_url=child.base_url, headers=headers, timeout=300) as client:
        verified = check(client.get(f"/deployments/{DEPLOYMENT}/audits/verify"), 200)
    print(
        f"\n{traffic.runs:,} approval runs, {traffic.tasks:,} tasks, {traffic.evidence:,} evidence"
        f" events; {Receiver.received:,} webhooks received; audit verified"
        f" {verified['verified']} ({verified['record_count']:,} records)"
    )
    if traffic.problems:
        print(f"unexpected answers ({len(traffic.problems)}), the first: {traffic.problems[0]}")
    if not verified["verified"] or Receiver.received < traffic.runs or traffic.problems:
        raise SystemExit("the soak's answers were not all right")
    settled = samples[len(samples) // 2 :]
    print("\nslope per hour over the second half (after the warm-up)")
    for name, bound in (
        ("rss_mib", 0.05),
        ("threads", 0),
        ("fds", 0),
        ("connections", 0),
        ("p99_ms", None),
    ):
        points = [(float(s.minute), float(getattr(s, name))) for s in settled]
        slope = slope_per_hour(points) if len(points) > 1 else 0.0
        level = statistics.fmean(y for _, y in points)
        limit = None if bound is None else max(bound * level, 1.0)
        verdict = "-" if limit is None else ("bounded" if slope <= limit else "GROWS")
        print(f"  {name:<12} level {level:9.1f}  slope {slope:+9.2f}/h  {verdict}")


if __name__ == "__main__":
    main()
