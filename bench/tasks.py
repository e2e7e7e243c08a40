"""External workers against an in-process action: completed runs per second of the same
three-node graph when its middle node is a task done by worker processes over HTTP (B) and when
it is the built-in ``set`` action run by the server itself (A). Target B / A >= 0.5.

Run as ``python bench/tasks.py [--runs N] [--rounds R] [--workers W]``. It prints figures and
checks only that what it got is correct (every run completed, with the output its node gave),
never anything about timing. The database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance
database on a server where this user may create databases) when set, else an embedded PostgreSQL
in a temporary directory; the database it uses is fresh, migrated, and dropped at the end.

One ECP server (this script run again as a child, ``--serve``, under uvicorn with the settings
``ecp serve`` has by default) serves both graphs. ``--workers`` processes of ``ecp worker --url
... --topic bench.work tasks:work`` (this script is the module) do B's tasks; ``work`` answers a
small dict at once. In each of ``--rounds`` rounds (the order alternates), 4 client
threads start the round's share of ``--runs`` runs of a graph with ``POST /runs``, and one
client reads ``GET /runs/{id}`` until every run has ended. A contender's rate is its runs over
the server's own span, from the first run's ``created_at`` to the last one's ``updated_at``;
the ratio is the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import contextlib
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx

from _database import Databases, server
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

if TYPE_CHECKING:
    from collections.abc import Iterator

TENANT = "bench"
TOPIC = "bench.work"
JWT_SECRET = "bench-" + "t" * 40
SIGNING_KEY = base64.b64encode(bytes(range(11, 43))).decode("ascii")
RATIO_TARGET = 0.5
STARTERS = 4
WARMUP_RUNS = 8
ENDED = {"completed", "failed", "terminated_by_policy"}
OUTPUT = {"worked": "bench"}


def work(_task: object) -> dict[str, str]:
    """The worker function (``tasks:work``): a small dict at once, whatever the task holds."""
    return dict(OUTPUT)


def graph(graph_id: str, middle: dict[str, Any]) -> dict[str, Any]:
    """start (``set``) -> ``middle`` -> end: the middle node is what the contenders differ in."""
    return {
        "graph_id": graph_id,
        "entry": "start",
        "nodes": [
            {
                "id": "start",
                "kind": "action",
                "action": {"name": "set", "fingerprint": "set/1", "arguments": {"values": {}}},
            },
            {"id": "work", **middle},
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "start", "target": "work"}, {"source": "work", "target": "done"}],
    }


IN_PROCESS = graph(
    "bench-in-process",
    {
        "kind": "action",
        "action": {"name": "set", "fingerprint": "set/1", "arguments": {"values": OUTPUT}},
    },
)
EXTERNAL = graph(
    "bench-task",
    {
        "kind": "task",
        "action": {
            "name": TOPIC,
            "fingerprint": "sha256:bench",
            "arguments": {},
            "capability_refs": [],
            "side_effect": "idempotent",
        },
    },
)
CONTENDERS = {"A in-process action": "in-process", "B external task": "task"}


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def check(response: httpx.Response, status: int) -> dict[str, Any]:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:500]}"
        )
    body: dict[str, Any] = response.json()
    return body


# -- the workers ---------------------------------------------------------------------------------


@contextlib.contextmanager
def workers(base_url: str, count: int) -> Iterator[None]:
    """``count`` ``ecp worker`` processes for ``TOPIC``, stopped with SIGTERM at the end."""
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["worker"], ttl_seconds=3600)
    here = pathlib.Path(__file__).resolve()
    ecp = pathlib.Path(sys.executable).with_name("ecp")
    command = [str(ecp), "worker", "--url", base_url, "--topic", TOPIC, f"{here.stem}:work"]
    path = os.pathsep.join(filter(None, [str(here.parent), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "ECP_TOKEN": token, "PYTHONPATH": path}
    logs = [tempfile.TemporaryFile(mode="w+") for _ in range(count)]  # noqa: SIM115 - closed below
    processes = [
        subprocess.Popen(command, env=env, stdout=log, stderr=log)  # noqa: S603 - our own tools
        for log in logs
    ]
    try:
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for index, (process, log) in enumerate(zip(processes, logs, strict=True)):
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.seek(0)
            text = log.read()
            log.close()
            if process.returncode not in (0, -signal.SIGTERM) or "Traceback" in text:
                print(f"  worker {index} exited with {process.returncode}; its log:")
                print("    " + text.strip()[-3000:].replace("\n", "\n    "))


# -- one batch of runs ---------------------------------------------------------------------------


def start_runs(base_url: str, headers: dict[str, str], deployment: str, count: int) -> list[str]:
    """Start ``count`` runs of ``deployment`` with ``STARTERS`` clients; their ids."""

    def start(share: int) -> list[str]:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30.0) as http:
            body = {"deployment_ref": deployment, "input": {}}
            return [check(http.post("/runs", json=body), 201)["run_id"] for _ in range(share)]

    shares = [count // STARTERS + (i < count % STARTERS) for i in range(STARTERS)]
    with concurrent.futures.ThreadPoolExecutor(STARTERS) as pool:
        return [run_id for ids in pool.map(start, shares) for run_id in ids]


def wait_for_end(http: httpx.Client, run_ids: list[str], seconds: float) -> list[dict[str, Any]]:
    """Every run once it ended. Oldest first, a sweep stops at the first run still going."""
    pending, ended = list(run_ids), []
    deadline = time.monotonic() + seconds
    while pending:
        while pending:
            run = check(http.get(f"/runs/{pending[0]}"), 200)
            if run["status"] not in ENDED:
                break
            ended.append(run)
            pending.pop(0)
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} runs had not ended after {seconds:.0f} s")
        if pending:
            time.sleep(0.02)
    return ended


def batch(
    http: httpx.Client, headers: dict[str, str], deployment: str, count: int
) -> tuple[int, float]:
    """``count`` runs of ``deployment`` started and ended: (runs, server seconds from the first
    start to the last end). Every run must have completed with ``OUTPUT`` as its output."""
    run_ids = start_runs(str(http.base_url), headers, deployment, count)
    runs = wait_for_end(http, run_ids, seconds=120.0)
    wrong = [r for r in runs if r["status"] != "completed" or r["output"] != OUTPUT]
    if wrong:
        raise RuntimeError(f"{len(wrong)} of {count} runs did not complete as expected: {wrong[0]}")
    began = min(datetime.fromisoformat(r["created_at"]) for r in runs)
    finished = max(datetime.fromisoformat(r["updated_at"]) for r in runs)
    return len(runs), (finished - began).total_seconds()


# -- main ----------------------------------------------------------------------------------------


WAKEUPS = 'ecp_long_poll_wakeups_total{bell="tasks_offered"}'
CLAIMS = 'ecp_http_requests_total{method="POST",route="/v1/tasks/claim",status="200"}'


def counters(http: httpx.Client) -> tuple[float, float] | None:
    """The server's counts so far of waiting task claims its rings woke (ADR 0071) and of claim
    requests answered (a completion that claims the next task saves one, ADR 0105), if shown."""
    response = http.get("/metrics")
    if response.status_code != 200:
        return None
    values = {WAKEUPS: 0.0, CLAIMS: 0.0}
    for line in response.text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in values:
            values[name] = float(value)
    return values[WAKEUPS], values[CLAIMS]


def prepare(http: httpx.Client) -> None:
    """Register and deploy both graphs."""
    for definition, deployment in ((IN_PROCESS, "in-process"), (EXTERNAL, "task")):
        check(http.post("/v1/graphs", json=definition), 201)
        body = {"deployment_ref": deployment, "graph_id": definition["graph_id"]}
        check(http.post("/v1/deployments", json=body), 201)


def measure(
    child: Child, http: httpx.Client, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, list[tuple[int, float]]]:
    """Interleaved rounds of both contenders; (runs, server seconds) by round, per contender."""
    for deployment in CONTENDERS.values():
        batch(http, headers, deployment, WARMUP_RUNS)
    per_round = max(1, args.runs // args.rounds)
    results: dict[str, list[tuple[int, float]]] = {name: [] for name in CONTENDERS}
    cpu: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    counted: dict[str, list[tuple[float, float]]] = {name: [] for name in CONTENDERS}
    names = list(CONTENDERS)
    for number in range(args.rounds):
        for name in names if number % 2 == 0 else names[::-1]:
            before, counts = child.cpu_seconds(), counters(http)
            count, seconds = batch(http, headers, CONTENDERS[name], per_round)
            after, counts_after = child.cpu_seconds(), counters(http)
            if before is not None and after is not None:
                cpu[name].append(after - before)
            if counts is not None and counts_after is not None:
                counted[name].append((counts_after[0] - counts[0], counts_after[1] - counts[1]))
            results[name].append((count, seconds))
            print(f"  round {number + 1} {name:<22} {count / seconds:8.1f} runs/s")
    print()
    for name, rounds in results.items():
        runs, seconds = sum(n for n, _ in rounds), sum(s for _, s in rounds)
        used = f"{sum(cpu[name]) * 1e3 / runs:.1f} ms" if cpu[name] else "n/a"
        woken = claims = "n/a"
        if counted[name]:
            woken = f"{sum(w for w, _ in counted[name]) / runs:.2f}"
            claims = f"{sum(c for _, c in counted[name]) / runs:.2f}"
        print(
            f"  {name:<22} {runs / seconds:8.1f} runs/s  ({runs} runs in {seconds:.1f} s; "
            f"server CPU {used}, claim requests {claims}, waiting claims woken {woken} per run)"
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400, help="runs per contender (default 400)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (default 4)")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return

    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"external tasks benchmark; {load_note()}")
    with server() as maintenance:
        databases = Databases(maintenance)
        try:
            _, url = databases.fresh("tasks")
            env = {
                "ECP_DATABASE_URL": url,
                "ECP_JWT_SECRET": JWT_SECRET,
                "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            }
            child = Child(__file__, env)
            try:
                with (
                    httpx.Client(base_url=child.base_url, headers=headers, timeout=30.0) as http,
                    workers(child.base_url, args.workers),
                ):
                    prepare(http)
                    print(
                        f"server: ECP under uvicorn in its own process; B's tasks done by "
                        f"{args.workers} `ecp worker` processes\n"
                        f"{args.runs} runs per contender in {args.rounds} interleaved rounds, "
                        f"started by {STARTERS} clients"
                    )
                    results = measure(child, http, headers, args)
            finally:
                child.stop()
        finally:
            databases.drop_all()
    ratio = statistics.median(
        (nb / sb) / (na / sa)
        for (na, sa), (nb, sb) in zip(
            results["A in-process action"], results["B external task"], strict=True
        )
    )
    met = "met" if ratio >= RATIO_TARGET else "NOT met"
    print(f"  B / A: {ratio:.2f} (median of per-round ratios; target >= {RATIO_TARGET}: {met})")
    print(f"  ({load_note()} at the end: other processes' load makes the figures noisy)")


if __name__ == "__main__":
    main()
