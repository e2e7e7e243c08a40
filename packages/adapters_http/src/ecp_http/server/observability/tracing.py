"""OpenTelemetry traces (the ``otel`` extra): a request, the dispatch attempts it caused, their audit.

Imported only when tracing is on (:func:`ecp_http.startup.bootstrap.start_tracing`): with no OTLP endpoint
configured nothing of OpenTelemetry is loaded and no hook runs. When on, each application has
its own tracer provider (never the process-global one) exporting in batches over OTLP/HTTP; the
standard ``OTEL_*`` variables (headers, timeout, compression, sampler, resource, service name)
apply, and ``service.name`` is ``ecp`` unless they name another.

Spans:

- ``{method} {route}`` (server) per request, a child of the client's W3C ``traceparent``;
- ``ecp.dispatch`` per dispatch attempt, started when a worker claims a run. Its parent is the
  request that last created or changed the run in this process (``POST /runs``, an approval
  resolved, a resume), so one trace holds the request, the attempts it set going and their
  audit appends; a run that process did not touch (a restart, another server) starts a trace;
- ``ecp.audit.append`` per audit record appended, a child of whatever span is current: the
  attempt, or the request that resolved an approval.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context, propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, OTELResourceDetector, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, SpanKind, Status, StatusCode

from ecp_core.runs.run.state_machine import TERMINAL
from ecp_http.server.observability.metrics import UNMATCHED
from ecp_http.server.observability.middleware import labels

if TYPE_CHECKING:
    from contextvars import Token

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ecp_core.audit.record import NodeAuditRecord
    from ecp_core.runs.run.model import Run, RunClaim

ORIGINS_KEPT = 10_000
"""At most this many runs remember the request that last touched them (oldest forgotten first)."""

_SERVER_ERROR = 500


class _Attempt:
    """The dispatch attempt a worker thread is in: its span, once a run is claimed."""

    __slots__ = ("span", "token")

    def __init__(self) -> None:
        self.span: Span | None = None
        self.token: Token[context.Context] | None = None


class Tracing:
    """One application's tracer provider and the hooks the request path and workers call."""

    def __init__(self, endpoint: str) -> None:
        """Export to ``endpoint``, the full OTLP/HTTP traces URL (``.../v1/traces``)."""
        detected = OTELResourceDetector().detect().attributes
        named = {} if SERVICE_NAME in detected else {SERVICE_NAME: "ecp"}
        self._provider = TracerProvider(resource=Resource.create(named))
        self._provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        self._tracer = self._provider.get_tracer("ecp_http")
        self._origins: OrderedDict[str, SpanContext] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()

    def shutdown(self) -> None:
        """Export what is buffered and stop the exporter (the application's lifespan ended)."""
        self._provider.shutdown()

    # Requests ---------------------------------------------------------------------------------

    def middleware(
        self, app: "ASGIApp", /, *, templates: Mapping[Callable[..., Any], str]
    ) -> "ASGIApp":
        """Wrap ``app`` in :class:`TracingMiddleware` (a factory for ``add_middleware``)."""
        return TracingMiddleware(app, tracer=self._tracer, templates=templates)

    # Runs ---------------------------------------------------------------------------------------

    def touched(self, run: "Run") -> None:
        """``run`` was created or saved: remember the request doing it, forget a run that ended."""
        if run.status in TERMINAL:
            with self._lock:
                self._origins.pop(run.run_id, None)
            return
        if self._current() is not None:
            return  # an attempt's own save: its parent stays the request that set it going
        span = trace.get_current_span()
        origin = span.get_span_context()
        if not origin.is_valid:
            return
        span.set_attribute("ecp.run_id", run.run_id)
        with self._lock:
            self._origins[run.run_id] = origin
            self._origins.move_to_end(run.run_id)
            while len(self._origins) > ORIGINS_KEPT:
                self._origins.popitem(last=False)

    def attempt(self, advance: Callable[[], "Run | None"]) -> "Run | None":
        """Call ``advance`` (one dispatch attempt); a run claimed in it gets an attempt span."""
        current = _Attempt()
        self._local.attempt = current
        advanced: Run | None = None
        try:
            advanced = advance()
            return advanced
        finally:
            self._local.attempt = None
            if current.span is not None:
                if advanced is not None:
                    current.span.set_attribute("ecp.run.status", advanced.public_status.value)
                if current.token is not None:
                    context.detach(current.token)
                current.span.end()

    def claimed(self, claim: "RunClaim") -> None:
        """A worker claimed a run: start the attempt's span and make it current in this thread."""
        current = self._current()
        if current is None or current.span is not None:
            return
        with self._lock:
            origin = self._origins.get(claim.run_id)
        parent = (
            context.Context()
            if origin is None
            else trace.set_span_in_context(NonRecordingSpan(origin), context.Context())
        )
        span = self._tracer.start_span(
            "ecp.dispatch",
            context=parent,
            attributes={
                "ecp.run_id": claim.run_id,
                "ecp.tenant_id": claim.tenant_id,
                "ecp.dispatch.failures": claim.dispatch_failures,
            },
        )
        current.span = span
        current.token = context.attach(trace.set_span_in_context(span))

    @contextmanager
    def appending(self, record: "NodeAuditRecord") -> Iterator[None]:
        """A span around appending ``record`` to its run's chain; names the attempt's node."""
        current = self._current()
        if current is not None and current.span is not None:
            current.span.set_attribute("ecp.node_id", record.node_id)
        with self._tracer.start_as_current_span(
            "ecp.audit.append",
            attributes={
                "ecp.run_id": record.run_id,
                "ecp.tenant_id": record.tenant_id,
                "ecp.node_id": record.node_id,
                "ecp.audit.attempt": record.attempt,
                "ecp.audit.status": str(record.status),
            },
        ):
            yield

    def _current(self) -> _Attempt | None:
        attempt: _Attempt | None = getattr(self._local, "attempt", None)
        return attempt


class TracingMiddleware:
    """A server span per HTTP request, continuing the client's trace (pure ASGI, outermost)."""

    def __init__(
        self,
        app: "ASGIApp",
        *,
        tracer: trace.Tracer,
        templates: Mapping[Callable[..., Any], str],
    ) -> None:
        """``templates`` maps each route endpoint to its path template, as for the metrics."""
        self._app = app
        self._tracer = tracer
        self._templates = dict(templates)

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        """Serve one request inside its span (other scopes pass through)."""
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        carrier = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        parent = propagate.extract(carrier)
        status = _SERVER_ERROR

        async def send_traced(message: "Message") -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", ()):
                    if name == b"x-request-id":
                        span.set_attribute("ecp.request_id", value.decode("latin-1"))
            await send(message)

        with self._tracer.start_as_current_span(
            scope["method"],
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"url.path": scope["path"], "url.scheme": scope.get("scheme", "http")},
        ) as span:
            try:
                await self._app(scope, receive, send_traced)
            finally:
                method, route = labels(scope, self._templates)
                span.set_attribute("http.request.method", method)
                if route != UNMATCHED:
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                if status >= _SERVER_ERROR:
                    span.set_status(Status(StatusCode.ERROR))
