"""Group commit of run starts (ADR 0102): commits per run and completed runs/s with 16 clients.

Run as ``python bench/start_groups.py [--clients N] [--runs M] [--rounds R]``. Two ECP servers
on two fresh databases of one PostgreSQL, alike but for ``ECP_START_BATCHING`` (``false``: each
start commits on its own, as before ADR 0102; ``true``: starts that arrive together share a
commit), take turns, round after round, under the same client loop: ``--clients`` clients each
``POST /runs`` with ``Prefer: wait`` (answered once the run waits for its approval) and then
approve it. Per round and server it prints completed runs/s, the POST /runs latency (median and
p99), and the commits PostgreSQL counted for the database (``pg_stat_database.xact_commit``,
background included) per completed run. The summary gives the medians and the ratio grouped /
alone (target >= 1.5 for runs/s, commits per run < 1). It checks only that every run completed.
The database server is ``ECP_BENCH_DATABASE_URL`` when set, else an embedded PostgreSQL.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys

import httpx
import psycopg

import _database
from _run_loop import RunLoop, bench_runs, prepare
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

TENANT = "bench"
JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
RUNS_TARGET = 1.5
"""Completed runs/s with the starts grouped over each start alone."""


def commits(url: str) -> int:
    """Transactions PostgreSQL committed in the database at ``url`` so far (its own statistics)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def p99(values: list[float]) -> float:
    """The 99th percentile, in milliseconds."""
    if len(values) < 2:
        return values[0] * 1e3 if values else float("nan")
    return statistics.quantiles(values, n=100)[98] * 1e3


def one_round(child: Child, url: str, headers: dict[str, str], args: argparse.Namespace) -> dict:
    """One client loop on ``child``: runs/s, latencies and commits per completed run."""
    before = commits(url)
    loop: RunLoop = bench_runs(child.base_url, headers, args.clients, args.runs, args.seconds)
    spent = commits(url) - before
    if loop.problems:
        sys.exit(f"unexpected answers: {loop.problems[:3]}")
    return {
        "rate": loop.completed / loop.seconds if loop.seconds else 0.0,
        "median": statistics.median(loop.start_latency) * 1e3,
        "p99": p99(loop.start_latency),
        "commits": spent / max(loop.completed, 1),
        "completed": loop.completed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--runs", type=int, default=480, help="runs per round (default 480)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0, help="most seconds per round")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"group commit of run starts: {args.clients} clients, {args.runs} runs a round")
    found: dict[str, list[dict]] = {"alone": [], "grouped": []}
    with _database.server() as maintenance:
        databases = _database.Databases(maintenance)
        children: dict[str, tuple[Child, str]] = {}
        try:
            for label, batching in (("alone", "false"), ("grouped", "true")):
                _, url = databases.fresh(label)
                env = {
                    "ECP_DATABASE_URL": url,
                    "ECP_JWT_SECRET": JWT_SECRET,
                    "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
                    "ECP_LOG_LEVEL": "WARNING",
                    "ECP_START_BATCHING": batching,
                }
                children[label] = (Child(__file__, env), url)
                with httpx.Client(
                    base_url=children[label][0].base_url, headers=headers, timeout=30.0
                ) as client:
                    prepare(client)
            for number in range(1, args.rounds + 1):
                for label, (child, url) in children.items():
                    figures = one_round(child, url, headers, args)
                    found[label].append(figures)
                    print(
                        f"  round {number} {label:<8} {figures['rate']:7.1f} runs/s, POST /runs "
                        f"median {figures['median']:.1f} ms p99 {figures['p99']:.1f} ms, "
                        f"{figures['commits']:.2f} commits per run ({figures['completed']} runs)"
                    )
        finally:
            for child, _ in children.values():
                child.stop()
            databases.drop_all()
    summary(found)


def summary(found: dict[str, list[dict]]) -> None:
    """The medians over rounds, and grouped / alone."""
    medians = {
        label: {key: statistics.median(r[key]) for key in ("rate", "p99", "commits")}
        for label, rounds in found.items()
        for r in [{k: [x[k] for x in rounds] for k in ("rate", "p99", "commits")}]
    }
    print("\nsummary (medians over rounds)")
    for label, figures in medians.items():
        print(
            f"  {label:<8} {figures['rate']:7.1f} runs/s, POST /runs p99 {figures['p99']:.1f} ms,"
            f" {figures['commits']:.2f} commits per completed run"
        )
    gain = medians["grouped"]["rate"] / medians["alone"]["rate"]
    met = "met" if gain >= RUNS_TARGET else "NOT met"
    print(f"  grouped / alone runs/s      {gain:.2f}   (target >= {RUNS_TARGET}: {met})")
    below = medians["grouped"]["commits"] < 1
    print(
        f"  grouped commits per run     {medians['grouped']['commits']:.2f}   "
        f"(target < 1: {'met' if below else 'NOT met'}; a run's approval commits once more)"
    )


if __name__ == "__main__":
    main()
