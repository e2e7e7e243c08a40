"""``create_app(settings)``: the Starlette application."""

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import Route

from ecp_core.errors import EcpError
from ecp_http import problems
from ecp_http.bootstrap import Runtime, build
from ecp_http.handlers import (
    api_keys,
    decisions,
    docs,
    evidence,
    graphs,
    health,
    metrics,
    reconciliation,
    retention,
    runs,
    webhooks,
)
from ecp_http.middleware import RequestMiddleware
from ecp_http.routing import BodyLimits, Operation, routes
from ecp_http.settings import Settings


def all_operations(runtime: Runtime) -> list[Operation]:
    """Every operation the server offers."""
    return [
        *health.operations(runtime),
        *graphs.operations(runtime),
        *runs.operations(runtime),
        *api_keys.operations(runtime),
        *retention.operations(runtime),
        *webhooks.operations(runtime),
        *evidence.operations(runtime),
        *reconciliation.operations(runtime),
        *decisions.operations(runtime),
        *docs.operations(runtime),
        *metrics.operations(runtime),
    ]


def create_app(settings: Settings, *, start_workers: bool = True) -> Starlette:
    """Build the application; workers start with its lifespan and drain when it ends."""
    runtime = build(settings)
    operations = all_operations(runtime)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        if start_workers:
            runtime.start()
        try:
            yield
        finally:
            runtime.close()

    app = Starlette(
        routes=routes(
            operations,
            runtime.authenticate,
            BodyLimits(default=settings.max_body_bytes, bulk=settings.max_evidence_body_bytes),
        ),
        lifespan=lifespan,
        exception_handlers={
            EcpError: problems.handle_ecp_error,
            HTTPException: problems.handle_http_error,
        },
    )
    templates = {r.endpoint: r.path for r in app.routes if isinstance(r, Route)}
    # Outermost of ours: request ids, metrics, and the one answer to an unforeseen error.
    app.add_middleware(RequestMiddleware, templates=templates, metrics=runtime.metrics)
    if runtime.tracing is not None:
        # Around it: the request's span covers everything, an unforeseen error's 500 included.
        app.add_middleware(runtime.tracing.middleware, templates=templates)
    app.state.runtime = runtime
    app.state.operations = operations
    return app
