"""HTTP overhead of the ECP server, and completed approval runs per second through HTTP.

Run as ``python bench/http_service.py [--requests N] [--runs M] [--threads T] [--budget S]``. It prints
figures and checks only that what it got is correct (every answer is 200, the runs complete, the
audit chains verify), never anything about timing. The database server is
``ECP_BENCH_DATABASE_URL`` (a maintenance database on a server where this user may create
databases) when set, else an embedded PostgreSQL in a temporary directory; the database it uses is
fresh, migrated, and dropped at the end.

Both HTTP servers are this script run again as a child process (``--serve ecp|bare``), each under
uvicorn with the same settings (h11 or httptools, whichever uvicorn picks; access log off), so the
server has a core and an interpreter of its own instead of sharing the client's.

1. ``GET /runs/{run_id}`` of a completed example run on the ECP app (bearer token checked, the run
   read from PostgreSQL, rendered) against a bare Starlette app whose one route answers the same
   JSON body from memory. The same client, ``--threads`` threads each with an ``httpx.Client``
   (keep-alive), ``--requests`` requests per contender in interleaved rounds. The ratio (target
   ECP / bare >= 0.35) is the median over rounds. Server CPU per request (from /proc) is printed
   too: when the client is the bottleneck, throughput hides the server's cost and CPU shows it.
   The same figures for ECP with logging and metrics off (``ECP_LOG_LEVEL=WARNING``,
   ``ECP_METRICS_ENABLED=false``) give the cost of observability: ECP (JSON log line per request
   to a file, Prometheus metrics) / ECP quiet, target >= 0.9.
2. Started-to-completed runs per second of the CONTRACT.md example graph (classify -> review ->
   notify -> done) with automatic approval: a client loop of ``POST /runs`` with ``Prefer:
   wait=10`` (answers once the run waits for approval), then ``POST .../resolve`` with approve
   (answers once the run completed), by one client and by ``--threads`` clients at once.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import contextlib
import importlib.util
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from starlette.requests import Request

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from _server import Child, ecp_app, serve
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.auth import mint_token
from ecp_postgres import EmbeddedPostgres, apply_migrations, create_database, drop_database

TENANT = "bench"
DEPLOYMENT = "refunds"
JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
RATIO_TARGET = 0.35
OBSERVED_TARGET = 0.9
QUIET = {"ECP_LOG_LEVEL": "WARNING", "ECP_METRICS_ENABLED": "false"}
WARMUP = 50


# -- reporting ------------------------------------------------------------------------------------


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


@dataclass
class Rounds:
    """Requests and seconds of one contender by round, with client and server CPU seconds."""

    rounds: list[tuple[int, float]] = field(default_factory=list)
    client_cpu: float = 0.0
    server_cpu: float | None = 0.0
    errors: int = 0

    @property
    def count(self) -> int:
        return sum(n for n, _ in self.rounds)

    @property
    def rate(self) -> float:
        seconds = sum(s for _, s in self.rounds)
        return self.count / seconds if seconds > 0 else 0.0

    def cpu_ms(self, seconds: float | None) -> str:
        return "n/a" if seconds is None else f"{seconds * 1e3 / max(self.count, 1):.3f} ms"


def paired_ratio(a: Rounds, b: Rounds) -> float:
    """Median over rounds of a's rate / b's rate in the same round."""
    return statistics.median(
        (na / sa) / (nb / sb) for (na, sa), (nb, sb) in zip(a.rounds, b.rounds, strict=True)
    )


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f} ms" if values else "n/a"


# -- the database -------------------------------------------------------------------------------


@contextlib.contextmanager
def database() -> Iterator[str]:
    """A fresh, migrated database; dropped (and an embedded server stopped) at the end."""
    configured = os.environ.get("ECP_BENCH_DATABASE_URL")
    directory = None
    embedded = None
    if configured:
        print("database server: ECP_BENCH_DATABASE_URL")
        maintenance = configured
    else:
        directory = tempfile.mkdtemp(prefix="ecp-bench-http-")
        embedded = EmbeddedPostgres(directory)
        started = time.perf_counter()
        maintenance = embedded.start()
        print(
            f"database server: embedded, in {directory} "
            f"(started in {time.perf_counter() - started:.1f} s)"
        )
    name = f"ecp_bench_http_{os.getpid()}"
    try:
        url = create_database(maintenance, name)
        apply_migrations(url)
        yield url
    finally:
        try:
            drop_database(maintenance, name)
        finally:
            if embedded is not None:
                embedded.stop()
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)


# -- the servers (child processes) ---------------------------------------------------------------


def http_implementation() -> str:
    """What uvicorn's ``http="auto"`` picks."""
    return "httptools" if importlib.util.find_spec("httptools") else "h11"


def bare_app(body: Any) -> Starlette:
    """One route answering ``body`` from memory (the same path shape as ``GET /runs/{id}``)."""

    async def get_run(_: Request) -> JSONResponse:
        return JSONResponse(body)

    return Starlette(routes=[Route("/runs/{run_id}", get_run, methods=["GET"])])


def child_app(kind: str) -> Any:
    """Child mode: the ECP app or the bare app (its body from ``ECP_BENCH_BARE_BODY``)."""
    if kind == "ecp":
        return ecp_app()
    return bare_app(json.loads(os.environ["ECP_BENCH_BARE_BODY"]))


def start_child(kind: str, env: dict[str, str]) -> Child:
    """This script as the ``kind`` server (``--serve kind``), ready once it answers."""
    return Child(__file__, env, kind=kind, live_path="/health/live" if kind == "ecp" else "/runs/-")


# -- part 1: GET /runs/{id}, ECP against bare Starlette ------------------------------------------


def hammer(
    base_url: str, path: str, headers: dict[str, str], threads: int, per_thread: int
) -> tuple[int, float, int]:
    """``threads`` clients each GET ``path`` ``per_thread`` times; (requests, seconds, errors)."""
    start = threading.Barrier(threads + 1)
    errors = [0] * threads

    def client(index: int) -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30.0) as http:
            for _ in range(WARMUP // threads + 1):
                http.get(path)
            start.wait()
            for _ in range(per_thread):
                if http.get(path).status_code != 200:
                    errors[index] += 1

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    return threads * per_thread, time.perf_counter() - began, sum(errors)


def bench_reads(
    servers: dict[str, Child], path: str, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, Rounds]:
    rounds = max(1, args.rounds)
    per_thread = max(1, args.requests // (rounds * args.threads))
    deadline = time.perf_counter() + args.budget / 2
    results = {name: Rounds() for name in servers}
    names = list(servers)
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            child = servers[name]
            cpu_before, client_before = child.cpu_seconds(), time.process_time()
            count, seconds, errors = hammer(child.base_url, path, headers, args.threads, per_thread)
            cpu_after = child.cpu_seconds()
            result = results[name]
            result.rounds.append((count, seconds))
            result.errors += errors
            result.client_cpu += time.process_time() - client_before
            if cpu_before is None or cpu_after is None or result.server_cpu is None:
                result.server_cpu = None
            else:
                result.server_cpu += cpu_after - cpu_before
        if number + 1 < rounds and time.perf_counter() > deadline:
            print(f"  (time budget spent after {number + 1} of {rounds} rounds)")
            break
    return results


def report_observed(reads: dict[str, Rounds]) -> float:
    """Print and return ECP (logs and metrics on) / ECP quiet (both off)."""
    ratio = paired_ratio(reads["ECP"], reads["ECP quiet"])
    met = "met" if ratio >= OBSERVED_TARGET else "NOT met"
    print(
        f"  ECP / ECP quiet (logging and metrics on / off): {ratio:.2f} "
        f"(median of per-round ratios; target >= {OBSERVED_TARGET}: {met})"
    )
    on, off = reads["ECP"].server_cpu, reads["ECP quiet"].server_cpu
    if on and off:
        extra = on / reads["ECP"].count - off / reads["ECP quiet"].count
        print(f"  server CPU that logging and metrics add per request: {extra * 1e6:.0f} µs")
    return ratio


def report_reads(reads: dict[str, Rounds]) -> float:
    """Print part 1's figures; return the ECP / bare ratio."""
    for name, result in reads.items():
        print(
            f"  {name:<16} {result.rate:8,.0f} requests/s  ({result.count:,} requests, "
            f"{result.errors} not 200); server CPU {result.cpu_ms(result.server_cpu)}"
            f" per request, client CPU {result.cpu_ms(result.client_cpu)} per request"
        )
    ratio = paired_ratio(reads["ECP"], reads["bare Starlette"])
    met = "met" if ratio >= RATIO_TARGET else "NOT met"
    print(
        f"  ECP / bare: {ratio:.2f} (median of per-round ratios; target >= {RATIO_TARGET}: {met})"
    )
    ecp_cpu, bare_cpu = reads["ECP"].server_cpu, reads["bare Starlette"].server_cpu
    if ecp_cpu and bare_cpu:
        per_ecp = ecp_cpu / reads["ECP"].count
        per_bare = bare_cpu / reads["bare Starlette"].count
        print(
            f"  server CPU per request, bare / ECP: {per_bare / per_ecp:.2f} "
            "(the ratio the servers alone would reach if neither client nor database limited)"
        )
    return ratio


# -- part 2: completed runs through HTTP -------------------------------------------------------


@dataclass
class RunLoop:
    """Runs a client loop completed, with the latency of each of its two requests."""

    completed: int = 0
    seconds: float = 0.0
    start_latency: list[float] = field(default_factory=list)
    resolve_latency: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def approve_runs(
    base_url: str, headers: dict[str, str], count: int, deadline: float, loop: RunLoop
) -> None:
    """Start and approve up to ``count`` runs, one after the other, until ``deadline``."""
    with httpx.Client(base_url=base_url, headers=headers, timeout=60.0) as http:
        for index in range(count):
            if time.perf_counter() > deadline:
                return
            began = time.perf_counter()
            started = http.post(
                "/runs",
                json={"deployment_ref": DEPLOYMENT, "input": {"order": f"B-{index}"}},
                headers={"Prefer": "wait=10"},
            )
            loop.start_latency.append(time.perf_counter() - began)
            run = started.json()
            if started.status_code != 201 or run.get("status") != "waiting_approval":
                loop.problems.append(f"POST /runs: {started.status_code} {started.text[:200]}")
                continue
            began = time.perf_counter()
            resolved = http.post(
                f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
                json={"decision": "approve"},
            )
            loop.resolve_latency.append(time.perf_counter() - began)
            status = resolved.json().get("run", {}).get("status")
            if resolved.status_code != 200 or status != "completed":
                loop.problems.append(f"resolve: {resolved.status_code} {resolved.text[:200]}")
                continue
            loop.completed += 1


def bench_runs(
    base_url: str, headers: dict[str, str], clients: int, count: int, seconds: float
) -> RunLoop:
    """``clients`` client loops at once, ``count`` runs in all, for at most ``seconds``."""
    loop = RunLoop()
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        share = -(-count // clients)
        futures = [
            pool.submit(approve_runs, base_url, headers, share, deadline, loop)
            for _ in range(clients)
        ]
        for future in futures:
            future.result()
    loop.seconds = time.perf_counter() - began
    return loop


def print_runs(label: str, loop: RunLoop) -> float:
    rate = loop.completed / loop.seconds if loop.seconds > 0 else 0.0
    print(
        f"  {label:<26} {rate:7.1f} runs/s  ({loop.completed} runs in {loop.seconds:.1f} s; "
        f"median POST /runs with wait {median_ms(loop.start_latency)}, "
        f"resolve {median_ms(loop.resolve_latency)})"
    )
    for problem in loop.problems[:5]:
        print(f"    unexpected answer: {problem}")
    return rate


# -- main ---------------------------------------------------------------------------------------


def check(response: httpx.Response, status: int) -> dict[str, Any]:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text}"
        )
    return response.json()


def prepare(client: httpx.Client) -> str:
    """Register and deploy the example graph; complete one run; return its id."""
    check(client.post("/v1/graphs", json=EXAMPLE_GRAPH), 201)
    check(
        client.post(
            "/v1/deployments",
            json={"deployment_ref": DEPLOYMENT, "graph_id": EXAMPLE_GRAPH["graph_id"]},
        ),
        201,
    )
    run = check(
        client.post(
            "/runs",
            json={"deployment_ref": DEPLOYMENT, "input": {"order": "A-1001"}},
            headers={"Prefer": "wait=10"},
        ),
        201,
    )
    answer = check(
        client.post(
            f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
            json={"decision": "approve"},
        ),
        200,
    )
    if answer["run"]["status"] != "completed":
        raise RuntimeError(f"the first run did not complete: {answer['run']}")
    return run["run_id"]


def print_summary(
    reads: dict[str, Rounds],
    *,
    ratio: float,
    observed: float,
    single_rate: float,
    many_rate: float,
    threads: int,
) -> None:
    met = "met" if ratio >= RATIO_TARGET else "NOT met"
    print("\nsummary")
    print(f"  GET /runs/{{id}} ECP          {reads['ECP'].rate:10,.0f} requests/s")
    print(f"  GET /runs/{{id}} bare         {reads['bare Starlette'].rate:10,.0f} requests/s")
    print(f"  ECP / bare                   {ratio:10.2f}   (target >= {RATIO_TARGET}: {met})")
    observed_met = "met" if observed >= OBSERVED_TARGET else "NOT met"
    print(
        f"  ECP / ECP quiet              {observed:10.2f}   "
        f"(logging and metrics on / off; target >= {OBSERVED_TARGET}: {observed_met})"
    )
    print(f"  completed runs, 1 client     {single_rate:10.1f} runs/s")
    print(f"  completed runs, {threads} clients    {many_rate:10.1f} runs/s")
    print(f"  ({load_note()} at the end: other processes' load makes the figures noisy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=12_000, help="GET requests per contender (default 12000)"
    )
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds (default 6)")
    parser.add_argument(
        "--threads", type=int, default=4, help="concurrent client threads (default 4)"
    )
    parser.add_argument(
        "--runs", type=int, default=300, help="runs per run loop measurement (default 300)"
    )
    parser.add_argument(
        "--budget", type=float, default=90.0, help="seconds for the timed parts (default 90)"
    )
    parser.add_argument("--serve", choices=["ecp", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(child_app(args.serve))
        return

    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"HTTP benchmark; {load_note()}")
    with database() as url:
        ecp_env = {
            "ECP_DATABASE_URL": url,
            "ECP_JWT_SECRET": JWT_SECRET,
            "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            "ECP_LOG_FORMAT": "json",
            "ECP_LOG_LEVEL": "INFO",
            "ECP_METRICS_ENABLED": "true",
        }
        ecp = start_child("ecp", ecp_env)
        children = [ecp]
        try:
            with httpx.Client(base_url=ecp.base_url, headers=headers, timeout=30.0) as client:
                run_id = prepare(client)
                body = client.get(f"/runs/{run_id}")
                print(
                    f"servers: ECP and bare Starlette, each under uvicorn in its own process "
                    f"({http_implementation()}, access log off); "
                    f"GET /runs/{{id}} answers {len(body.content)} bytes"
                )
            bare = start_child("bare", {"ECP_BENCH_BARE_BODY": body.text})
            children.append(bare)
            quiet = start_child("ecp", {**ecp_env, **QUIET})
            children.append(quiet)

            print(
                f"\n1. GET /runs/{{id}}: {args.threads} client threads (httpx, keep-alive), "
                f"~{args.requests:,} requests per contender in {args.rounds} interleaved rounds"
            )
            reads = bench_reads(
                {"ECP": ecp, "ECP quiet": quiet, "bare Starlette": bare},
                f"/runs/{run_id}",
                headers,
                args,
            )
            ratio = report_reads(reads)
            observed = report_observed(reads)
            quiet.stop()
            children.remove(quiet)

            print(f"\n2. completed runs (example graph, approve each): {load_note()}")
            budget = args.budget / 2
            single = bench_runs(ecp.base_url, headers, 1, args.runs, budget / 2)
            single_rate = print_runs("1 client", single)
            many = bench_runs(ecp.base_url, headers, args.threads, args.runs, budget / 2)
            many_rate = print_runs(f"{args.threads} clients at once", many)

            with httpx.Client(base_url=ecp.base_url, headers=headers, timeout=120.0) as client:
                verification = check(client.get(f"/deployments/{DEPLOYMENT}/audits/verify"), 200)
            expected = 5 * (1 + single.completed + many.completed)
            print(
                f"  audit check: verified {verification['verified']}, signatures "
                f"{verification['signature_verified']}, {verification['record_count']} records "
                f"(expected at least {expected})"
            )
            if not verification["verified"] or verification["record_count"] < expected:
                raise RuntimeError(f"the audit trail does not verify: {verification}")

            print_summary(
                reads,
                ratio=ratio,
                observed=observed,
                single_rate=single_rate,
                many_rate=many_rate,
                threads=args.threads,
            )
        finally:
            for child in reversed(children):
                child.stop()


if __name__ == "__main__":
    main()
