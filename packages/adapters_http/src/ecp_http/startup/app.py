"""``create_app(settings)``: the Starlette application over what the composition root wires."""

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import Route

from ecp_core.errors import EcpError
from ecp_http.config.settings import Settings
from ecp_http.server import problems
from ecp_http.server.observability.middleware import RequestMiddleware
from ecp_http.server.routing import BodyLimits, routes
from ecp_http.server.threads import HandlerThreads
from ecp_http.startup.bootstrap import Storage, build


def create_app(
    settings: Settings, *, start_workers: bool = True, storage: Storage | None = None
) -> Starlette:
    """Build the application; workers start with its lifespan and drain when it ends.

    ``storage`` chooses where the data lives (see :func:`ecp_http.startup.bootstrap.build`): PostgreSQL
    at ``settings.database_url`` by default, or a ``MemoryStore``.
    """
    runtime = build(settings, storage=storage)
    threads = HandlerThreads()

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        if start_workers:
            runtime.start()
        try:
            yield
        finally:
            runtime.close()
            threads.close()

    app = Starlette(
        routes=routes(
            runtime.operations,
            runtime.services,
            BodyLimits(default=settings.max_body_bytes, bulk=settings.max_evidence_body_bytes),
            threads=threads,
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
    app.state.operations = list(runtime.operations)
    return app
