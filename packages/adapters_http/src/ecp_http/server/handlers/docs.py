"""``GET /openapi.json``, ``GET /docs`` and the reference page's assets (ADR 0056)."""

from typing import Any

from starlette.responses import HTMLResponse, Response

from ecp_core.errors import NotFound
from ecp_http.server.api_reference import ASSET_HEADERS, ASSETS_PATH, PAGE_HEADERS
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "docs"


def openapi_document(_: Call, services: Services) -> dict[str, Any]:
    """The OpenAPI document (built on the first request)."""
    return services.api.document()


def docs_page(_: Call, services: Services) -> HTMLResponse:
    """The API reference: Swagger UI over the same document."""
    return HTMLResponse(services.api.page(), headers=PAGE_HEADERS)


def docs_asset(call: Call, services: Services) -> Response:
    """A script or stylesheet of the reference page, gzipped when the client takes gzip."""
    asset = services.api.assets().get(call.path["asset"])
    if asset is None:
        raise NotFound("no such asset")
    headers = {**ASSET_HEADERS, "Vary": "Accept-Encoding"}
    accepted = call.headers.get("accept-encoding", "")
    if "gzip" in (coding.split(";")[0].strip() for coding in accepted.split(",")):
        headers["Content-Encoding"] = "gzip"
        return Response(asset.gzipped, media_type=asset.media_type, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


OPERATIONS = [
    Operation(
        method="GET",
        path="/openapi.json",
        handler=openapi_document,
        operation_id="docs_openapi",
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
        operation_id="docs_page",
        tag=TAG,
        summary="The API reference (Swagger UI over this document), an HTML page",
        permission=None,
        response=str,
        public=True,
        media_type="text/html",
    ),
    Operation(
        method="GET",
        path=ASSETS_PATH + "/{asset}",
        handler=docs_asset,
        operation_id="docs_asset",
        tag=TAG,
        summary="A script or stylesheet of the API reference, under a name that changes with it",
        permission=None,
        response=str,
        public=True,
        media_type="text/javascript",
        alternate_media=("text/css",),
    ),
]
