"""The outermost request middleware: request ids, one access line, HTTP metrics, last-resort 500.

Pure ASGI. It takes the client's ``X-Request-Id`` when sane (1 to 128 of ``[A-Za-z0-9._:-]``),
else makes one; puts it in :data:`ecp_http.logs.request_id` for the request's log lines (the
context is copied into the worker thread that runs the handler); and answers it on every
response. An exception nothing else handled is logged once, with that id, and answered here as
a 500 problem, so no server layer above logs it again.

Per request it does only what differs between requests: the metric series of a (method, route,
status) are looked up once and kept (ADR 0064).
"""

import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ecp_http.logs import request_id
from ecp_http.server import problems
from ecp_http.server.observability.metrics import UNMATCHED, Metrics

log = logging.getLogger("ecp_http.requests")

HEADER = b"x-request-id"
_SANE = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def new_request_id() -> str:
    """A fresh request id: 32 hex digits (128 random bits)."""
    return os.urandom(16).hex()


def _client_id(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == HEADER:
            return value.decode("ascii") if _SANE.fullmatch(value) else None
    return None


def labels(scope: Scope, templates: Mapping[Callable[..., Any], str]) -> tuple[str, str]:
    """A served request's ``method`` (a standard one or ``OTHER``) and ``route`` (its template).

    ``route`` is :data:`~ecp_http.server.observability.metrics.UNMATCHED` when no route matched, never the raw path.
    """
    endpoint = scope.get("endpoint")
    route = UNMATCHED if endpoint is None else templates.get(endpoint, UNMATCHED)
    return (scope["method"] if scope["method"] in _METHODS else "OTHER"), route


class RequestMiddleware:
    """Wrap the application: see the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        templates: Mapping[Callable[..., Any], str],
        metrics: Metrics | None,
    ) -> None:
        """``templates`` maps each route endpoint to its path template (the ``route`` label)."""
        self._app = app
        self._templates = dict(templates)
        self._metrics = metrics
        self._series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request (other scopes pass through)."""
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        rid = _client_id(scope) or new_request_id()
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 500
        begun = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, begun
            if message["type"] == "http.response.start":
                begun = True
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (HEADER, rid.encode("ascii"))]
            await send(message)

        try:
            await self._app(scope, receive, send_with_id)
        except Exception as exc:  # noqa: BLE001 - the one place an unforeseen error is logged
            problems.log_unexpected(exc)
            if not begun:
                await problems.unexpected()(scope, receive, send_with_id)
        finally:
            self._finish(scope, status, time.perf_counter() - started)
            request_id.reset(token)

    def _finish(self, scope: Scope, status: int, seconds: float) -> None:
        method, route = labels(scope, self._templates)
        if self._metrics is not None:
            counter, histogram = self._series_of(self._metrics, method, route, status)
            counter.inc()
            histogram.observe(seconds)
        if log.isEnabledFor(logging.INFO):
            log.info(
                "http request",
                extra={
                    "method": method,
                    "route": route,
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round(seconds * 1000, 3),
                },
            )

    def _series_of(
        self, metrics: Metrics, method: str, route: str, status: int
    ) -> tuple[Counter, Histogram]:
        """The request counter's and the duration histogram's series of these labels."""
        key = (method, route, status)
        series = self._series.get(key)
        if series is None:  # only the event loop's thread serves here: no lock needed
            series = (
                metrics.http_requests.labels(method, route, str(status)),
                metrics.http_duration.labels(method, route),
            )
            self._series[key] = series
        return series
