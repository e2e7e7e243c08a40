"""Where a server's CPU goes: cProfile in every thread of a bench's server child, then a breakdown.

The child calls :func:`profiled` around its serving: each thread (the event loop, the worker
threads that run handlers, the pool's and the dispatcher's) gets a profiler of its own that
counts that thread's CPU time (``time.thread_time``), so waiting on a socket or a lock costs
nothing and the figures add up to CPU seconds. When serving ends the profiles are merged into
one ``pstats`` file. The parent reads it with :func:`breakdown`. Imported by the bench scripts;
not run.
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

Function = tuple[str, int, str]
"""A profiled function as pstats names it: file, line, name."""

# (label, what it matches): a function is (file, line, name); a pattern is "file part:name", or
# "file part" for every function of the matching files. "cum" parts are inclusive times of entry
# points that do not call one another; "self" parts add the functions' own time, excluding
# anything an inclusive part already holds.
INCLUSIVE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("authentication (JWT verified)", ("ecp_http/server/auth.py:__call__",)),
    ("permission check", ("ecp_core/permissions.py:permissions_of",)),
    ("path and query parameters", ("ecp_http/server/routing.py:_checked_parameters",)),
    (
        "database: take a connection (pool check), bind repositories",
        ("ecp_postgres/database.py:__enter__",),
    ),
    ("database: SELECT the run, row to model", ("ecp_postgres/runs.py:get",)),
    ("database: roll back, give the connection back", ("ecp_postgres/database.py:__exit__",)),
    ("response model (RunStatusResponse.of)", ("ecp_core/runs/run/model.py:of",)),
    ("cattrs unstructure", ("ecp_core/wire.py:unstructure",)),
    ("JSON rendering", ("starlette/responses.py:render", "ecp_http/server/rendering.py:render")),
    (
        "metrics (prometheus_client)",
        (
            "prometheus_client/metrics.py:labels",
            "prometheus_client/metrics.py:inc",
            "prometheus_client/metrics.py:observe",
        ),
    ),
    ("request log line (logging, JSON)", ("logging/__init__.py:info",)),
)
# The run path: the run's own work first, then the HTTP layer's parts outside it.
RUN_INCLUSIVE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("run work in requests: start a run", ("ecp_core/runs/engine/service.py:start",)),
    ("run work in requests: resolve, drive the run to its end", ("ecp_core/service.py:resolve",)),
    ("run reads in requests (Prefer: wait)", ("ecp_core/runs/engine/service.py:get",)),
    ("dispatcher threads (claim, attempt)", ("ecp_http/background/dispatch.py:_loop",)),
    (
        "sweeps (overdue approvals, webhook outbox)",
        ("ecp_http/background/dispatch.py:_sweep_loop",),
    ),
    INCLUSIVE[0],
    (
        "request bodies (JSON parse, cattrs structure)",
        ("ecp_core/json_text.py:parse_json_text", "ecp_core/wire.py:structure"),
    ),
    *INCLUSIVE[-5:],
)
SELF: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("HTTP protocol (uvicorn, httptools)", ("uvicorn/", "httptools")),
    ("event loop (asyncio, selectors)", ("asyncio/", "selectors.py", "<built-in method select")),
    ("thread hop (anyio, threading, queue)", ("anyio/", "threading.py", "queue.py", "concurrent/")),
    ("routing and request objects (starlette)", ("starlette/",)),
    ("ECP request plumbing (middleware, endpoint)", ("ecp_http/",)),
    (
        "PostgreSQL driver and pool, elsewhere (e.g. the pool's threads)",
        ("psycopg", "ecp_postgres/"),
    ),
)


@contextlib.contextmanager
def profiled(path: str) -> Iterator[None]:
    """Profile the CPU of every thread (this one and any started inside) into ``path``."""
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start(*_: object) -> None:  # the first profile event of a new thread
        profile = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(profile)
        profile.enable()

    threading.setprofile(start)
    main = cProfile.Profile(time.thread_time)
    main.enable()
    try:
        yield
    finally:
        main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]
        with lock:
            stats = pstats.Stats(main)
            for profile in profiles:
                stats.add(profile)
        stats.dump_stats(path)


def _matches(function: Function, patterns: tuple[str, ...]) -> bool:
    file, _, name = function
    for pattern in patterns:
        part, colon, wanted = pattern.partition(":")
        if part in file and (not colon or name == wanted):
            return True
        if not colon and part in name:
            return True
    return False


def breakdown(path: str, *, runs: bool = False) -> list[tuple[str, float]]:
    """(part, CPU seconds) from the profile at ``path``; the last part is the rest.

    An inclusive part is the cumulative time of its entry points, less what an earlier part's
    entry points hold. A function called both under an entry point and elsewhere is split by
    its callers' shares (as gprof does), so that its own time outside every entry point goes
    to the "self" part it matches, or to the rest.
    """
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())
    parts: list[tuple[str, float]] = []
    roots: set[Function] = set()
    for label, patterns in RUN_INCLUSIVE if runs else INCLUSIVE:
        earlier = _share_under(stats, roots)
        chosen = [f for f in stats if f not in roots and _matches(f, patterns)]
        parts.append((label, sum(stats[f][3] * (1 - earlier.get(f, 0.0)) for f in chosen)))
        roots.update(chosen)
    under = _share_under(stats, roots)
    taken: set[Function] = set()
    for label, patterns in SELF:
        chosen = [f for f in stats if f not in taken and f not in roots and _matches(f, patterns)]
        parts.append((label, sum(stats[f][2] * (1 - under.get(f, 0.0)) for f in chosen)))
        taken.update(chosen)
    counted = sum(seconds for _, seconds in parts)
    parts.append(("the rest", total - counted))
    return parts


def _share_under(stats: dict[Function, Any], roots: set[Function]) -> dict[Function, float]:
    """For each function, the share of its time spent under one of ``roots`` (1 for a root)."""
    share = dict.fromkeys(roots, 1.0)
    for _ in range(40):  # call graphs are shallow; a fixed number of passes converges
        changed = False
        for function, (_, _, _, cumulative, callers) in stats.items():
            if function in roots or cumulative <= 0:
                continue
            inside = sum(edge[3] * share.get(caller, 0.0) for caller, edge in callers.items())
            value = min(1.0, inside / cumulative)
            if abs(value - share.get(function, 0.0)) > 1e-9:
                share[function] = value
                changed = True
        if not changed:
            break
    return share


def top(path: str, count: int = 25) -> None:
    """Print the ``count`` functions with the most own CPU time."""
    stats = pstats.Stats(path)
    stats.sort_stats("tottime").print_stats(count)


def print_breakdown(path: str, count: int, *, runs: bool = False) -> None:
    """Print :func:`breakdown` of the profile at ``path`` per request (or run), with shares."""
    parts = breakdown(path, runs=runs)
    total = sum(seconds for _, seconds in parts)
    for label, seconds in parts:
        share = seconds / total if total else 0.0
        print(f"    {label:<62} {seconds * 1e6 / max(count, 1):9.0f}  {share:6.1%}")
    print(f"    {'total':<62} {total * 1e6 / max(count, 1):9.0f}")
