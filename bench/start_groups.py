"""Group commit of run starts and resolutions (ADRs 0102, 0106, 0107): commits per run and runs/s.

Run as ``python bench/start_groups.py [--clients N] [--runs M] [--rounds R] [--straight]
[--base DIR]``. Two ECP servers on two fresh databases of one PostgreSQL, alike but for
``ECP_START_BATCHING`` and ``ECP_RESOLUTION_BATCHING`` (``alone``, the default ``false``: each
start and each resolution commits on its own; ``grouped``, ``true``: the starts waiting for a run
worker share its commit, and resolutions arriving together share one), take turns, round
after round, under the same client loop: ``--clients`` clients each ``POST /runs`` with ``Prefer:
wait`` (answered once the run waits for its approval) and then approve it; with ``--straight``
the graph has no approval and the start's answer is the completed run. ``--base DIR`` adds a
third server, ``before``: the packages of another checkout (a git worktree of an earlier commit)
first on its path, its own migrations applied. Per round and server it prints completed runs/s,
the POST /runs latency (median and p99), the resolution's p99, and the CPU the server and
PostgreSQL spent per run (``/proc``); after the rounds, the commits PostgreSQL counted for each
database (``pg_stat_database.xact_commit``, background included, read once every backend
reported) per completed run. The summary gives the medians, grouped / alone, and each / before
(target >= 1.5, issue 40) with commits per run (target < 1). It checks only that every run
completed.
The database server is ``ECP_BENCH_DATABASE_URL`` when set, else an embedded PostgreSQL.
"""

from __future__ import annotations

import argparse
import base64
import os
import pathlib
import statistics
import sys
import time

import httpx
import psycopg

import _database
from _cpu import backend_postmaster, postgres_seconds
from _run_loop import DEPLOYMENT, STRAIGHT, RunLoop, bench_runs, prepare, prepare_straight
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

TENANT = "bench"
JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
RUNS_TARGET = 1.5
"""Completed runs/s over those of the tree ``--base`` names (issue 40: the tree it was filed on)."""


STATS_SETTLE_SECONDS = 11.0
"""A backend reports its counts to the statistics at most once a second while busy, and an idle
one with counts unreported does so within 10 s; waiting longer than that lets every count
arrive."""


def commits(urls: dict[str, str]) -> dict[str, int]:
    """Transactions PostgreSQL committed so far in each database of ``urls`` (by label), from its
    own statistics once every backend's counts have arrived."""
    time.sleep(STATS_SETTLE_SECONDS)
    counted = {}
    for label, url in urls.items():
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
        counted[label] = int(row[0]) if row else 0
    return counted


def p99(values: list[float]) -> float:
    """The 99th percentile, in milliseconds."""
    if len(values) < 2:
        return values[0] * 1e3 if values else float("nan")
    return statistics.quantiles(values, n=100)[98] * 1e3


def contenders(base: pathlib.Path | None) -> list[tuple[str, str]]:
    """The servers to compare, with their batching settings: the earlier tree's first."""
    alike = [("alone", "false"), ("grouped", "true")]
    return [("before", "false"), *alike] if base is not None else alike


def baseline_env(base: pathlib.Path) -> dict[str, str]:
    """The environment that serves ``base``'s packages: its sources first on the path, and its
    own migrations applied by the server (``ECP_BENCH_MIGRATE``)."""
    sources = sorted(str(path) for path in (base / "packages").glob("*/src"))
    if not sources:
        sys.exit(f"--base {base}: no packages/*/src there")
    path = os.pathsep.join([*sources, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {"PYTHONPATH": path, "ECP_BENCH_MIGRATE": "1"}


def one_round(
    child: Child, postmaster: int | None, headers: dict[str, str], args: argparse.Namespace
) -> dict:
    """One client loop on ``child``: runs/s and latencies."""
    deployment = STRAIGHT if args.straight else DEPLOYMENT
    cpu, postgres = child.cpu_seconds(), postgres_seconds(postmaster)
    loop: RunLoop = bench_runs(
        child.base_url, headers, args.clients, args.runs, args.seconds, deployment=deployment
    )
    spent, postgres_spent = child.cpu_seconds(), postgres_seconds(postmaster)
    if loop.problems:
        sys.exit(f"unexpected answers: {loop.problems[:3]}")
    return {
        "rate": loop.completed / loop.seconds if loop.seconds else 0.0,
        "median": statistics.median(loop.start_latency) * 1e3,
        "p99": p99(loop.start_latency),
        "resolve_p99": p99(loop.resolve_latency) if loop.resolve_latency else float("nan"),
        "completed": loop.completed,
        "cpu": per_run(cpu, spent, loop.completed),
        "postgres": per_run(postgres, postgres_spent, loop.completed),
    }


def per_run(before: float | None, after: float | None, runs: int) -> float:
    """CPU milliseconds a run between two readings (nan when either is unknown)."""
    if before is None or after is None:
        return float("nan")
    return (after - before) / max(runs, 1) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--runs", type=int, default=480, help="runs per round (default 480)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0, help="most seconds per round")
    parser.add_argument(
        "--base",
        type=pathlib.Path,
        help="a checkout of an earlier tree (e.g. a git worktree) to serve as a third contender",
    )
    parser.add_argument(
        "--straight",
        action="store_true",
        help="runs of the example graph without its approval: each start completes its run",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"group commit of run starts: {args.clients} clients, {args.runs} runs a round")
    found: dict[str, list[dict]] = {label: [] for label, _ in contenders(args.base)}
    spent: dict[str, float] = {}
    """Commits per completed run, over all rounds, background included."""
    with _database.server() as maintenance:
        databases = _database.Databases(maintenance)
        children: dict[str, tuple[Child, str]] = {}
        try:
            for label, batching in contenders(args.base):
                _, url = databases.fresh(label, migrate=label != "before")
                env = {
                    "ECP_DATABASE_URL": url,
                    "ECP_JWT_SECRET": JWT_SECRET,
                    "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
                    "ECP_LOG_LEVEL": "WARNING",
                    "ECP_START_BATCHING": batching,
                    "ECP_RESOLUTION_BATCHING": batching,
                }
                if label == "before":
                    env |= baseline_env(args.base)
                children[label] = (Child(__file__, env), url)
                with httpx.Client(
                    base_url=children[label][0].base_url, headers=headers, timeout=30.0
                ) as client:
                    prepare(client)
                    prepare_straight(client)
            urls = {label: url for label, (_, url) in children.items()}
            postmaster = backend_postmaster(next(iter(urls.values())))
            first = commits(urls)
            for number in range(1, args.rounds + 1):
                for label, (child, _) in children.items():
                    figures = one_round(child, postmaster, headers, args)
                    found[label].append(figures)
                    print(
                        f"  round {number} {label:<8} {figures['rate']:7.1f} runs/s, POST /runs "
                        f"median {figures['median']:.1f} ms p99 {figures['p99']:.1f} ms, "
                        f"resolve p99 {figures['resolve_p99']:.1f} ms, "
                        f"CPU a run: server {figures['cpu']:.2f} ms, "
                        f"PostgreSQL {figures['postgres']:.2f} ms "
                        f"({figures['completed']} runs)"
                    )
            last = commits(urls)
            for label, rounds in found.items():
                completed = sum(figures["completed"] for figures in rounds)
                spent[label] = (last[label] - first[label]) / max(completed, 1)
        finally:
            for child, _ in children.values():
                child.stop()
            databases.drop_all()
    summary(found, spent)


def summary(found: dict[str, list[dict]], spent: dict[str, float]) -> None:
    """The medians over rounds, the commits per run over them all, and the ratios."""
    medians = {
        label: {
            key: statistics.median(figures[key] for figures in rounds)
            for key in ("rate", "p99", "resolve_p99", "cpu", "postgres")
        }
        for label, rounds in found.items()
    }
    print("\nsummary (medians over rounds; commits over all rounds, background included)")
    for label, figures in medians.items():
        print(
            f"  {label:<8} {figures['rate']:7.1f} runs/s, POST /runs p99 {figures['p99']:.1f} ms,"
            f" resolve p99 {figures['resolve_p99']:.1f} ms,"
            f" CPU a run: server {figures['cpu']:.2f} ms, PostgreSQL {figures['postgres']:.2f} ms,"
            f" {spent.get(label, float('nan')):.2f} commits per completed run"
        )
    gain = medians["grouped"]["rate"] / medians["alone"]["rate"]
    print(f"  grouped / alone runs/s      {gain:.2f}   (what grouping gives)")
    if "before" in medians:
        for label in ("alone", "grouped"):
            gain = medians[label]["rate"] / medians["before"]["rate"]
            met = "met" if gain >= RUNS_TARGET else "NOT met"
            print(
                f"  {label + ' / before runs/s':<27} {gain:.2f}   (target >= {RUNS_TARGET}: {met})"
            )
    grouped = spent.get("grouped", float("nan"))
    print(
        f"  grouped commits per run     {grouped:.2f}   "
        f"(target < 1: {'met' if grouped < 1 else 'NOT met'}; starts and resolutions grouped)"
    )


if __name__ == "__main__":
    main()
