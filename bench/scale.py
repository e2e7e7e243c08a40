"""Scale-out: completed runs per second through HTTP with 1, 2 and 4 server processes, one database.

Run as ``python bench/scale.py [--workers 1,2,4] [--rounds R] [--seconds S] [--clients C]``. It
prints figures and checks that what it wrote is correct (no run lost or run twice), never anything
about timing. The database server is ``ECP_BENCH_DATABASE_URL`` when set, else an embedded
PostgreSQL in a temporary directory; each process count has a fresh, migrated database of its
own, dropped at the end.

Each measurement starts the real ``ecp serve --port 0 --workers N`` (the parent supervises N
processes on one socket, ADR 0062), lets ``--clients`` client loops (spread over
``--client-processes`` processes, so the client is not held by one interpreter's lock) drive the
example graph (``ecp_core.demo``) for ``--seconds``: ``POST /runs`` with ``Prefer: wait=10`` (answers at
``waiting_approval``), then ``POST .../resolve`` with approve (answers ``completed``). Then it
stops the server with SIGTERM (exit status 0 required). The process counts take turns in
``--rounds`` interleaved rounds with a rotating order; a ratio is the median of per-round ratios.

Where the ceiling is, from ``/proc`` over each window: CPU of the server processes, of PostgreSQL
(postmaster, backends, and backends that exited), of the clients, and of the whole machine;
commits from ``pg_stat_database.xact_commit`` (per completed run over the server's life). The
server + database CPU per run predicts the throughput on a larger machine.

At the end, per database: every run a client started exists and completed, none other exists,
each has one resolved approval and exactly the audit records of one pass through the graph, and
the deployment's chains verify (digests and signatures) with the exact record count.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import pathlib
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
import psycopg

from _cpu import machine_busy_seconds, postgres_seconds, postmaster_of
from _database import Databases, server
from _scale_parts import (
    DEPLOYMENT,
    JWT_SECRET,
    START_SECONDS,
    TENANT,
    Served,
    client_share,
    one_run,
)
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.server.auth import mint_token

if TYPE_CHECKING:
    from multiprocessing.managers import SyncManager


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


# -- one measurement ----------------------------------------------------------------------------


@dataclass
class Sample:
    runs: int
    seconds: float
    server_cpu: float | None
    pg_cpu: float | None
    client_cpu: float
    machine_cpu: float | None
    start_s: list[float]
    resolve_s: list[float]
    commits: int

    @property
    def rate(self) -> float:
        return self.runs / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Target:
    """One process count's database and what was started on it."""

    workers: int
    name: str
    url: str
    data_dir: pathlib.Path
    started: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    records_per_run: int = 0
    problems: list[str] = field(default_factory=list)


def xact_commits(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def prepare(target: Target, base_url: str, headers: dict[str, str]) -> None:
    """Register and deploy the example graph; one run tells how many audit records a run has."""
    with httpx.Client(base_url=base_url, headers=headers, timeout=60.0) as http:
        for path, body in (
            ("/v1/graphs", EXAMPLE_GRAPH),
            (
                "/v1/deployments",
                {"deployment_ref": DEPLOYMENT, "graph_id": EXAMPLE_GRAPH["graph_id"]},
            ),
        ):
            answer = http.post(path, json=body)
            if answer.status_code != 201:
                raise RuntimeError(f"POST {path}: {answer.status_code} {answer.text}")
        out: dict[str, Any] = {
            "ids": target.started,
            "start_s": [],
            "resolve_s": [],
            "problems": [],
        }
        if not one_run(http, 0, out):
            raise RuntimeError(f"the first run did not complete: {out['problems']}")
        verified = http.get(f"/runs/{target.started[0]}/audit/verify").json()
        target.records_per_run = int(verified["record_count"])


def snapshot(
    served: Served, url: str, postmaster: int | None
) -> tuple[float | None, float | None, float | None, int]:
    """CPU seconds of the server, PostgreSQL and the machine, and the database's commits.

    Backends report their commits to ``pg_stat_database`` about once a second while busy, so
    the counts at both ends of a window are late by about the same amount.
    """
    return (
        served.cpu_seconds(),
        postgres_seconds(postmaster),
        machine_busy_seconds(),
        xact_commits(url),
    )


def delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def measure(
    target: Target,
    pool: concurrent.futures.Executor,
    manager: SyncManager,
    args: argparse.Namespace,
    *,
    postmaster: int | None,
    check: bool,
) -> Sample:
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    served = Served(target.workers, target.url, target.data_dir)
    try:
        if not target.records_per_run:
            prepare(target, served.base_url, headers)
        share = [args.clients // args.client_processes] * args.client_processes
        share[0] += args.clients - sum(share)
        ready = manager.Barrier(args.clients + 1)
        futures = [
            pool.submit(client_share, served.base_url, token, n, ready, args.seconds)
            for n in share
            if n
        ]
        ready.wait(START_SECONDS)  # every client loop has made its warm-up run
        start_at = time.monotonic()
        before = snapshot(served, target.url, postmaster)
        results = [future.result() for future in futures]
        after = snapshot(served, target.url, postmaster)
        seconds = max(r["finish"] for r in results) - start_at
        for result in results:
            target.started += result["ids"]
            target.problems += result["problems"]
        sample = Sample(
            runs=sum(r["completed"] for r in results),
            seconds=seconds,
            server_cpu=delta(before[0], after[0]),
            pg_cpu=delta(before[1], after[1]),
            client_cpu=sum(r["cpu"] for r in results),
            machine_cpu=delta(before[2], after[2]),
            commits=int(after[3] - before[3]),
            start_s=[s for r in results for s in r["start_s"]],
            resolve_s=[s for r in results for s in r["resolve_s"]],
        )
        if check:
            verify(target, served.base_url, headers)
    finally:
        served.stop()
    target.samples.append(sample)
    return sample


# -- the checks ---------------------------------------------------------------------------------


def verify(target: Target, base_url: str, headers: dict[str, str]) -> None:
    """No run lost or run twice; every chain verifies with the exact record count."""
    with psycopg.connect(target.url, autocommit=True) as conn:
        stored = {row[0]: row[1] for row in conn.execute("SELECT run_id, status FROM ecp_runs")}
        off = conn.execute(
            "SELECT count(*) FROM (SELECT run_id FROM ecp_audit_records GROUP BY run_id"
            " HAVING count(*) <> %s) x",
            (target.records_per_run,),
        ).fetchone()[0]
        approvals, pending = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM ecp_approvals"
        ).fetchone()
    started = set(target.started)
    if len(started) != len(target.started):
        target.problems.append("a run id was answered twice")
    if set(stored) != started:
        target.problems.append(
            f"runs stored {len(stored)}, started {len(started)}: "
            f"{len(started - set(stored))} lost, {len(set(stored) - started)} unknown"
        )
    if any(status != "COMPLETED" for status in stored.values()):
        target.problems.append(
            f"runs not completed: {sum(s != 'COMPLETED' for s in stored.values())}"
        )
    if off:
        target.problems.append(f"{off} runs without exactly {target.records_per_run} audit records")
    if approvals != len(stored) or pending:
        target.problems.append(f"approvals {approvals} for {len(stored)} runs, {pending} pending")
    with httpx.Client(base_url=base_url, headers=headers, timeout=300.0) as http:
        answer = http.get(f"/deployments/{DEPLOYMENT}/audits/verify").json()
    expected = target.records_per_run * len(stored)
    if (
        not (answer.get("verified") and answer.get("signature_verified"))
        or answer.get("record_count") != expected
    ):
        target.problems.append(f"chains: {answer} (expected {expected} records)")
    print(
        f"  check, {target.workers} process(es): {len(stored)} runs, all completed once; "
        f"{expected} audit records verify (digests and signatures)"
        if not target.problems
        else f"  check, {target.workers} process(es): PROBLEMS {target.problems[:5]}"
    )


# -- reporting ----------------------------------------------------------------------------------


def per_second(value: float | None, sample: Sample) -> str:
    return "n/a" if value is None else f"{value / sample.seconds:4.2f}"


def report(targets: list[Target]) -> None:
    base = targets[0]
    print("\nsummary (medians over rounds; CPU in CPUs busy over the window)")
    print(
        "  processes  runs/s  vs 1   server  postgres  clients  machine  "
        "server+pg ms/run  commits/run  commits/s  p50 start/resolve ms"
    )
    for target in targets:
        pick = sorted(target.samples, key=lambda s: s.rate)[len(target.samples) // 2]
        ratios = [
            s.rate / b.rate for s, b in zip(target.samples, base.samples, strict=True) if b.rate
        ]
        ratio = statistics.median(ratios) if ratios else float("nan")
        used = (pick.server_cpu or 0.0) + (pick.pg_cpu or 0.0)
        per_run = used * 1e3 / max(pick.runs, 1)
        commits = pick.commits / max(pick.runs, 1)
        print(
            f"  {target.workers:9d}  {pick.rate:6.1f}  {ratio:4.2f}  "
            f"{per_second(pick.server_cpu, pick):>6}  {per_second(pick.pg_cpu, pick):>8}  "
            f"{pick.client_cpu / pick.seconds:7.2f}  {per_second(pick.machine_cpu, pick):>7}  "
            f"{per_run:16.2f}  {commits:11.1f}  {commits * pick.rate:9.0f}  "
            f"{statistics.median(pick.start_s) * 1e3:6.1f} / {statistics.median(pick.resolve_s) * 1e3:.1f}"
        )
    best = max(targets, key=lambda t: statistics.median(s.rate for s in t.samples))
    sample = sorted(best.samples, key=lambda s: s.rate)[len(best.samples) // 2]
    if sample.server_cpu is not None and sample.pg_cpu is not None and sample.runs:
        per_run = (sample.server_cpu + sample.pg_cpu) / sample.runs
        with_clients = per_run + sample.client_cpu / sample.runs
        print(
            f"\n  per completed run ({best.workers} process(es)): server "
            f"{sample.server_cpu / sample.runs * 1e3:.2f} ms + PostgreSQL "
            f"{sample.pg_cpu / sample.runs * 1e3:.2f} ms CPU (clients {sample.client_cpu / sample.runs * 1e3:.2f} ms)"
        )
        print(
            f"  this machine ({os.cpu_count()} CPUs, clients included) predicts at most "
            f"{(os.cpu_count() or 1) / with_clients:.0f} runs/s; with the clients elsewhere and "
            "server processes >= cores, CPU alone predicts "
            + ", ".join(f"{cores} cores {cores / per_run:,.0f}/s" for cores in (8, 16, 32))
        )
    print(f"  ({load_note()} at the end: other processes' load makes the figures noisy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4", help="process counts (default 1,2,4)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=5.0, help="window per measurement (5)")
    parser.add_argument("--clients", type=int, default=8, help="client loops in all (default 8)")
    parser.add_argument(
        "--client-processes", type=int, default=2, help="processes the clients run in (default 2)"
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    print(f"scale-out benchmark: ecp serve --workers {counts}; {load_note()}")
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="ecp-scale-"))
    spawn = multiprocessing.get_context("spawn")
    with (
        server() as url,
        concurrent.futures.ProcessPoolExecutor(args.client_processes, spawn) as pool,
        spawn.Manager() as manager,
    ):
        databases = Databases(url)
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                postmaster = postmaster_of(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            if postmaster is None:
                print("PostgreSQL runs elsewhere: its CPU is not measured")
            targets = []
            for n in counts:
                name, db_url = databases.fresh(f"w{n}")
                targets.append(Target(n, name, db_url, scratch / f"w{n}"))
            print(
                f"{args.clients} client loops in {args.client_processes} processes, "
                f"{args.seconds:.0f} s windows, {args.rounds} rounds\n"
            )
            for number in range(args.rounds):
                order = targets[number % len(targets) :] + targets[: number % len(targets)]
                for target in order:
                    last = number == args.rounds - 1  # check the database on its last server
                    sample = measure(target, pool, manager, args, postmaster=postmaster, check=last)
                    print(
                        f"  round {number + 1}, {target.workers} process(es): {sample.rate:6.1f} runs/s "
                        f"({sample.runs} runs in {sample.seconds:.1f} s); {load_note()}"
                    )
            report(targets)
            if any(target.problems for target in targets):
                raise SystemExit("runs were lost, run twice or do not verify (see above)")
        finally:
            databases.drop_all()
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
