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
   ECP / bare >= 0.5) is the median over rounds. Server CPU per request (from /proc) is printed
   too: when the client is the bottleneck, throughput hides the server's cost and CPU shows it.
   The same figures for ECP with logging and metrics off (``ECP_LOG_LEVEL=WARNING``,
   ``ECP_METRICS_ENABLED=false``) give the cost of observability: ECP (JSON log line per request
   to a file, Prometheus metrics) / ECP quiet, target >= 0.9. Then the same GET replayed in this
   process part by part without a profiler (``_http_parts``), and the idle server's CPU.
2. Started-to-completed runs per second of the example graph (classify -> review ->
   notify -> done) with automatic approval: a client loop of ``POST /runs`` with ``Prefer:
   wait=10`` (answers once the run waits for approval), then ``POST .../resolve`` with approve
   (answers once the run completed), by one client and by ``--threads`` clients at once,
   against the figures measured on this machine before issue 22 (target with 4 clients >= 2x).
3. With ``--profile N``: N GETs, then N/20 runs, each on a fresh ECP server under cProfile
   (``_profile``), CPU by part. The profiler inflates code that makes many small calls, so
   read its shares next to the replayed parts of 1.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import importlib.util
import json
import os
import pathlib
import signal
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

import _database
import _http_parts
import _http_statements
import _profile
from _reads import WARMUP, Rounds, bench_reads, hammer, paired_ratio
from _run_loop import DEPLOYMENT, bench_runs, check, prepare, print_runs
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

TENANT = "bench"
JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
RATIO_TARGET = 0.5
OBSERVED_TARGET = 0.9
IDLE_SECONDS = 3.0
RUNS_BEFORE = 27.3
"""Completed runs/s with 4 clients before issue 22: the code at 63ba175 measured on the 2-CPU
machine at load 2, 2026-11-27 13:45, a minute after this tree gave 48.8 (the earlier median of
16.0 was taken at load 4.5 to 9, and flattered the ratio). A fixed figure: this machine's speed
moves by a third within an hour, so compare on the same machine and load, or run the old tree
beside this one (bench/README.md, "Against the code before issue 22, side by side")."""
BEFORE_CLIENTS = 4
RUNS_GAIN_TARGET = 2.0
QUIET = {"ECP_LOG_LEVEL": "WARNING", "ECP_METRICS_ENABLED": "false"}


# -- reporting ------------------------------------------------------------------------------------


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def spent(before: float | None, after: float | None) -> float | None:
    """CPU seconds between two readings of a server's CPU (None when either is unknown)."""
    return None if before is None or after is None else after - before


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
    if kind in ("ecp", "ecp-profile"):
        return ecp_app()
    return bare_app(json.loads(os.environ["ECP_BENCH_BARE_BODY"]))


def child_serve(kind: str) -> None:
    """Child mode: serve; ``ecp-profile`` under a profiler writing to ``ECP_BENCH_PROFILE``."""
    app = child_app(kind)
    if kind != "ecp-profile":
        serve(app)
        return
    # uvicorn raises the SIGTERM it caught again once it stopped: ignore it so the profile is saved.
    signal.signal(signal.SIGTERM, lambda *_: None)
    with _profile.profiled(os.environ["ECP_BENCH_PROFILE"]):
        serve(app)


def start_child(kind: str, env: dict[str, str]) -> Child:
    """This script as the ``kind`` server (``--serve kind``), ready once it answers."""
    return Child(
        __file__, env, kind=kind, live_path="/health/live" if kind != "bare" else "/runs/-"
    )


# -- part 1: GET /runs/{id}, ECP against bare Starlette ------------------------------------------


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


# -- part 4: statements per run -----------------------------------------------------------------


def statements_server(url: str) -> Child:
    """An ECP server with ``ecp serve``'s defaults (logs at WARNING) on the database at ``url``."""
    return start_child(
        "ecp",
        {
            "ECP_DATABASE_URL": url,
            "ECP_JWT_SECRET": JWT_SECRET,
            "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            **QUIET,
        },
    )


# -- part 3: where the server's CPU goes -------------------------------------------------------


def profile_server(
    ecp_env: dict[str, str], path: str, headers: dict[str, str], args: argparse.Namespace
) -> None:
    """GETs, then runs, each on a fresh ECP server under cProfile; print CPU by part."""
    per_thread = max(1, args.profile // args.threads)
    runs = max(args.threads, args.profile // 20)
    print(
        f"\n3. where the ECP server's CPU goes (cProfile of thread CPU time in every server "
        f"thread; the profiler slows it, so read the shares): {load_note()}"
    )
    with contextlib.ExitStack() as stack:
        folder = args.profile_dir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ecp-bench-profile-")
        )
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)  # a --profile-dir may be new
        out = str(pathlib.Path(folder) / "get.prof")
        child = start_child("ecp-profile", {**ecp_env, "ECP_BENCH_PROFILE": out})
        try:
            count, _, errors = hammer(child.base_url, path, headers, args.threads, per_thread)
        finally:
            child.stop()
        count += args.threads * (WARMUP // args.threads + 1)
        print(f"  GET /runs/{{id}}, {count:,} requests ({errors} not 200), CPU µs per request:")
        _profile.print_breakdown(out, count)
        if args.top:
            _profile.top(out, args.top)
        out = str(pathlib.Path(folder) / "runs.prof")
        child = start_child("ecp-profile", {**ecp_env, "ECP_BENCH_PROFILE": out})
        try:
            loop = bench_runs(child.base_url, headers, args.threads, runs, args.budget / 4)
        finally:
            child.stop()
        print(f"  completed runs, {loop.completed} by {args.threads} clients, CPU µs per run:")
        for problem in loop.problems[:5]:
            print(f"    unexpected answer: {problem}")
        _profile.print_breakdown(out, loop.completed, runs=True)
        if args.top:
            _profile.top(out, args.top)


# -- main ---------------------------------------------------------------------------------------


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
    if threads == BEFORE_CLIENTS:
        gain = many_rate / RUNS_BEFORE
        print(
            f"  {threads} clients / before issue 22 {gain:8.2f}   ({RUNS_BEFORE} runs/s on this machine"
            f" at load 2; target >= {RUNS_GAIN_TARGET}: "
            f"{'met' if gain >= RUNS_GAIN_TARGET else 'NOT met'})"
        )
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
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        help="GET requests (and a twentieth as many runs) on a profiled server (default 0: none)",
    )
    parser.add_argument("--top", type=int, default=0, help="also print the top N functions")
    parser.add_argument("--profile-dir", help="keep the profiles (get.prof, runs.prof) there")
    parser.add_argument(
        "--statements-only",
        action="store_true",
        help="only part 4: statements and commits per run over HTTP, idle statements/s",
    )
    parser.add_argument("--serve", choices=["ecp", "ecp-profile", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        child_serve(args.serve)
        return

    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"HTTP benchmark; {load_note()}")
    with _database.server() as maintenance:
        databases = _database.Databases(maintenance)
        try:
            if not args.statements_only:
                _, url = databases.fresh("http")
                measure(url, headers, args)
            print(
                "\n4. statements and commits per run over HTTP, PostgreSQL's statement log "
                f"(log_statement = all on a database of its own): {load_note()}"
            )
            _http_statements.measure(databases, statements_server, headers, args.runs)
        finally:
            databases.drop_all()


def measure(url: str, headers: dict[str, str], args: argparse.Namespace) -> None:
    """Parts 1 to 3 on the database at ``url``."""
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
        served = reads["ECP"]
        print(f"  the same GET replayed in this process, CPU µs per request by part: {load_note()}")
        _http_parts.report(
            ecp_env,
            f"/runs/{run_id}",
            headers,
            None if served.server_cpu is None else served.server_cpu / served.count,
        )
        idle = ecp.cpu_seconds()
        time.sleep(IDLE_SECONDS)
        if idle is not None and (after := ecp.cpu_seconds()) is not None:
            print(
                f"  the ECP server idle (dispatcher, sweeps): {(after - idle) / IDLE_SECONDS * 1e3:.0f} ms CPU/s"
            )
        quiet.stop()
        children.remove(quiet)

        print(f"\n2. completed runs (example graph, approve each): {load_note()}")
        budget = args.budget / 2
        before = ecp.cpu_seconds()
        single = bench_runs(ecp.base_url, headers, 1, args.runs, budget / 2)
        between = ecp.cpu_seconds()
        single_rate = print_runs("1 client", single, spent(before, between))
        many = bench_runs(ecp.base_url, headers, args.threads, args.runs, budget / 2)
        many_rate = print_runs(
            f"{args.threads} clients at once", many, spent(between, ecp.cpu_seconds())
        )

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

        if args.profile > 0:
            profile_server(ecp_env, f"/runs/{run_id}", headers, args)
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
