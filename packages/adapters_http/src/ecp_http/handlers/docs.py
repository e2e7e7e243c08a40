"""``GET /openapi.json`` and ``GET /docs``: the API described by its own operations."""

from typing import Any

from starlette.responses import HTMLResponse

from ecp_http.routing import Call, Operation
from ecp_http.services import Services

TAG = "docs"


def openapi_document(_: Call, services: Services) -> dict[str, Any]:
    """The OpenAPI document (built on the first request)."""
    return services.api.document()


def docs_page(_: Call, services: Services) -> HTMLResponse:
    """The HTML page of the same document."""
    return HTMLResponse(services.api.page())


OPERATIONS = [
    Operation(
        method="GET",
        path="/openapi.json",
        handler=openapi_document,
        tag=TAG,
        summary="This OpenAPI 3.1 document",
        permission=None,
        response=dict[str, Any],
        public=True,
    ),
    Operation(
        method="GET",
        path="/docs",
        handler=docs_page,
        tag=TAG,
        summary="The API documentation as an HTML page",
        permission=None,
        response=str,
        public=True,
        media_type="text/html",
    ),
]
