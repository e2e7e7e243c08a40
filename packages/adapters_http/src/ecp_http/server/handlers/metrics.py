"""``GET /metrics``: Prometheus text format, behind ``ECP_METRICS_TOKEN`` when that is set."""

import hmac

from starlette.responses import Response

from ecp_core.errors import NotFound, Unauthenticated
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "operations"
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def metrics_text(call: Call, services: Services) -> Response:
    """The application's metrics (the route is not served when metrics are disabled)."""
    metrics = services.metrics
    if metrics is None:
        raise NotFound("metrics are disabled")
    token = services.settings.metrics_token
    if token is not None:
        given = call.headers.get("authorization", "").encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, f"Bearer {token}".encode()):
            raise Unauthenticated("metrics need the bearer token set in ECP_METRICS_TOKEN")
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)


OPERATIONS = [
    Operation(
        method="GET",
        path="/metrics",
        handler=metrics_text,
        operation_id="operations_metrics",
        tag=TAG,
        summary="Prometheus metrics; needs `Authorization: Bearer $ECP_METRICS_TOKEN` when set",
        permission=None,
        public=True,
        media_type=PROMETHEUS_TEXT,
        response=str,
    ),
]
