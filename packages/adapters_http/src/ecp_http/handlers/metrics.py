"""``GET /metrics``: Prometheus text format, behind ``ECP_METRICS_TOKEN`` when that is set."""

import hmac
from typing import TYPE_CHECKING

from starlette.responses import Response

from ecp_core.errors import Unauthenticated
from ecp_http.routing import Call, Operation

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "operations"
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area: none when metrics are disabled."""
    metrics = runtime.metrics
    if metrics is None:
        return []
    token = runtime.settings.metrics_token
    expected = None if token is None else f"Bearer {token}".encode()

    def metrics_text(call: Call) -> Response:
        if expected is not None:
            given = call.headers.get("authorization", "").encode("utf-8", "surrogateescape")
            if not hmac.compare_digest(given, expected):
                raise Unauthenticated("metrics need the bearer token set in ECP_METRICS_TOKEN")
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    return [
        Operation(
            method="GET",
            path="/metrics",
            handler=metrics_text,
            tag=TAG,
            summary="Prometheus metrics; needs `Authorization: Bearer $ECP_METRICS_TOKEN` when set",
            permission=None,
            public=True,
            media_type=PROMETHEUS_TEXT,
            response=str,
        ),
    ]
