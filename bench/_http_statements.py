"""Statements and commits per run over HTTP, and the idle server's statements, as PostgreSQL's own
statement log counts them (``_pg_log``). Imported by ``http_service.py``; not run.

A fresh database with ``log_statement = all``, an ECP server of its own on it (``ecp serve``'s
defaults), the example graph deployed and a few runs to warm up; then the idle server for
``IDLE_SECONDS`` and ``runs`` runs by one client (``POST /runs`` with ``Prefer: wait``, then
resolve with approve), everything every session of the server sent counted: the requests, the
dispatcher, the sweeps, the listener. Targets (issue 40): at most 12 statements and 2 commits per
run, background included, and an idle server that polls nothing a notification could tell it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import httpx

import _database
import _pg_log
from _run_loop import bench_runs, prepare

if TYPE_CHECKING:
    from collections.abc import Callable

    from _server import Child

IDLE_SECONDS = 10.0
STATEMENTS_TARGET = 12.0
COMMITS_TARGET = 2.0
IDLE_TARGET = 0.5
"""Statements per second of an idle server: a safety-net poll at most every few seconds."""
WARMUP_RUNS = 5


def measure(
    databases: _database.Databases,
    start: Callable[[str], Child],
    headers: dict[str, str],
    runs: int,
) -> tuple[float | None, float | None, float | None]:
    """Print the figures; return statements and commits per run and idle statements/s."""
    name, url = databases.fresh("statements")
    log = _pg_log.log_path(databases.url, _database.embedded_log)
    _pg_log.log_every_statement(databases.url, name)
    child = start(url)
    try:
        with httpx.Client(base_url=child.base_url, headers=headers, timeout=30.0) as client:
            prepare(client)
        bench_runs(child.base_url, headers, 1, WARMUP_RUNS, 60.0)
        time.sleep(1.0)  # what the warm-up woke settles
        idle = _pg_log.opened(log)
        time.sleep(IDLE_SECONDS)
        idle.close()
        window = _pg_log.opened(log)
        loop = bench_runs(child.base_url, headers, 1, runs, 120.0)
        window.close()
    finally:
        child.stop()
    done = max(loop.completed, 1)
    if not window.known:
        print("  statements: unknown (no readable server log); set ECP_BENCH_DATABASE_URL's log")
        return None, None, None
    per_run, commits = window.total / done, window.commits / done
    quiet = idle.total / IDLE_SECONDS
    print(
        f"  per run over HTTP, 1 client, {loop.completed} runs, background included: "
        f"{per_run:.1f} statements (target <= {STATEMENTS_TARGET:.0f}: "
        f"{'met' if per_run <= STATEMENTS_TARGET else 'NOT met'}), {commits:.2f} commits "
        f"(target <= {COMMITS_TARGET:.0f}: {'met' if commits <= COMMITS_TARGET else 'NOT met'}), "
        f"{window.rollbacks / done:.2f} rollbacks"
    )
    print(
        f"    of the commits per run, {(window.commits - window.log_commits) / done:.2f} the"
        f" requests' and the rest of the background's, {window.log_commits / done:.2f} the"
        " transparency log's (a checkpoint at most once a second, off the request path)"
    )
    print(f"    by kind per run: {window.per(done)}")
    print(
        f"  the idle server over {IDLE_SECONDS:.0f} s: {quiet:.2f} statements/s "
        f"(target <= {IDLE_TARGET}: {'met' if quiet <= IDLE_TARGET else 'NOT met'})"
        + (f"; by kind per second: {idle.per(IDLE_SECONDS)}" if idle.total else "")
    )
    return per_run, commits, quiet
