"""``GET /runs/{id}`` replayed in the bench's own process, timed part by part, without a profiler.

A profiler's cost per call inflates code that makes many small calls (PyJWT checks a token
character by character), so the parts are timed the plain way instead: each part called
``repeat`` times in a row, in batches, median per call. The app is built as the server builds it
(workers not started) over the same database and reads the same run. The whole app called
through ASGI without a socket gives the app's own CPU; the server's CPU per request less that
is uvicorn, httptools and the sockets. Imported by ``http_service.py``; not run.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import statistics
import time
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from ecp_core.permissions import Permission, permissions_of
from ecp_core.runs.run.model import RunStatusResponse
from ecp_core.wire import unstructure
from ecp_http import logs
from ecp_http.config.settings import Settings
from ecp_http.server import routing
from ecp_http.server.auth import Authenticator
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.rendering import JsonAnswer
from ecp_http.server.threads import HandlerThreads
from ecp_http.startup.app import create_app

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

BATCHES = 5
READ = Permission.RUN_READ


def per_call(part: Callable[[], object], repeat: int) -> float:
    """Median over batches of the CPU seconds of one call of ``part``."""
    part()
    times = []
    for _ in range(BATCHES):
        began = time.thread_time()
        for _ in range(repeat):
            part()
        times.append((time.thread_time() - began) / repeat)
    return statistics.median(times)


def scope_of(path: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """An ASGI scope of ``GET path`` with ``headers``, as uvicorn makes it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("ascii"),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"*/*"),
            (b"accept-encoding", b"gzip, deflate"),
            (b"connection", b"keep-alive"),
            (b"user-agent", b"python-httpx/0.28.1"),
            *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


def whole_app(app: Any, scope: dict[str, Any], repeat: int) -> float:
    """CPU seconds of one request through the whole ASGI app (all threads of this process)."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def requests() -> float:
        await app({**scope, "state": {}}, receive, send)
        times = []
        for _ in range(BATCHES):
            began = time.process_time()
            for _ in range(repeat):
                await app({**scope, "state": {}}, receive, send)
            times.append((time.process_time() - began) / repeat)
        return statistics.median(times)

    seconds = asyncio.run(requests())
    if set(statuses) != {200}:
        raise RuntimeError(f"the replayed GET answered {sorted(set(statuses))}")
    return seconds


def thread_hop(hop: Callable[[Callable[[], int]], Awaitable[int]], repeat: int) -> float:
    """CPU seconds of one hop to a worker thread and back (what every handler call pays)."""

    async def hops() -> float:
        await hop(int)
        times = []
        for _ in range(BATCHES):
            began = time.process_time()
            for _ in range(repeat):
                await hop(int)
            times.append((time.process_time() - began) / repeat)
        return statistics.median(times)

    return asyncio.run(hops())


def handler_threads(repeat: int) -> float:
    """:func:`thread_hop` through the app's :class:`~ecp_http.server.threads.HandlerThreads`."""
    threads = HandlerThreads()
    try:
        return thread_hop(threads.run, repeat)
    finally:
        threads.close()


def request_log(repeat: int) -> float:
    """One JSON access line as the middleware writes it, to a file as the bench's server does."""
    logger = logging.getLogger("ecp_bench.requests")
    handler = logging.StreamHandler(io.TextIOWrapper(open(os.devnull, "wb")))  # noqa: SIM115, PTH123 - closed below
    handler.setFormatter(logs.JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    facts = {"method": "GET", "route": "/runs/{run_id}", "path": "/runs/x", "status": 200}
    try:
        return per_call(lambda: logger.info("http request", extra={**facts, "ms": 1.5}), repeat)
    finally:
        logger.removeHandler(handler)
        handler.close()


def replay(
    env: Mapping[str, str], path: str, headers: Mapping[str, str], repeat: int = 2000
) -> list[tuple[str, float]]:
    """(part, CPU seconds per request) of ``GET path`` on an app built from ``env``.

    The first part is the whole app (with metrics, without its log line); the others are the
    pieces it is made of, and the log line it writes in the server.
    """
    settings = Settings.from_mapping({**env, "ECP_LOG_LEVEL": "WARNING"})
    app = create_app(settings, start_workers=False)
    runtime = app.state.runtime
    services = runtime.services
    try:
        scope = scope_of(path, headers)
        wanted = {k.lower(): v for k, v in headers.items()}
        authenticate = services.authenticate
        actor = authenticate(wanted)
        tenant, run_id = actor.tenant_id, path.rsplit("/", 1)[1]
        run = services.ecp.runs.get(tenant, run_id)
        body = RunStatusResponse.of(run)
        shaped = unstructure(body)
        metrics = Metrics()

        def fresh_token() -> object:
            return Authenticator(settings.jwt_secret)(wanted)

        def labelled() -> None:
            metrics.http_requests.labels("GET", "/runs/{run_id}", "200").inc()
            metrics.http_duration.labels("GET", "/runs/{run_id}").observe(0.0015)

        quarter = repeat // 4
        return [
            ("whole app through ASGI, no socket (all its threads)", whole_app(app, scope, quarter)),
            ("authentication: a token seen before", per_call(lambda: authenticate(wanted), repeat)),
            ("authentication: a token never seen (JWT verified)", per_call(fresh_token, repeat)),
            ("headers as a dict", per_call(lambda: routing.header_map(scope), repeat)),
            ("permission check", per_call(lambda: READ in permissions_of(actor.roles), repeat)),
            (
                "database read (unit of work, pool, SQL, row to model)",
                per_call(lambda: services.ecp.runs.get(tenant, run_id), quarter),
            ),
            (
                "response model (RunStatusResponse.of)",
                per_call(lambda: RunStatusResponse.of(run), repeat),
            ),
            ("cattrs unstructure", per_call(lambda: unstructure(body), repeat)),
            ("JSON rendering (JsonAnswer)", per_call(lambda: JsonAnswer(shaped), repeat)),
            (
                "JSON rendering (Starlette's JSONResponse)",
                per_call(lambda: JSONResponse(shaped), repeat),
            ),
            ("metrics: labels looked up each time", per_call(labelled, repeat)),
            ("request log line (JSON, to a file)", request_log(repeat)),
            ("thread hop (HandlerThreads)", handler_threads(quarter)),
            ("thread hop (Starlette's run_in_threadpool)", thread_hop(run_in_threadpool, quarter)),
        ]
    finally:
        runtime.close()


def report(
    env: Mapping[str, str], path: str, headers: Mapping[str, str], server: float | None
) -> None:
    """Print :func:`replay`'s parts in µs; ``server`` is the served CPU per request, if known."""
    parts = replay(env, path, headers)
    for label, seconds in parts:
        print(f"    {label:<58} {seconds * 1e6:8.0f}")
    if server is not None:
        print(f"    {'server CPU per request (above)':<58} {server * 1e6:8.0f}")
        rest = server - parts[0][1]
        print(f"    {'  less the whole app: uvicorn, sockets, idle work':<58} {rest * 1e6:8.0f}")
