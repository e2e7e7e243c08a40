"""Audit health: readiness to sign the trail, and the webhook outbox's delivery health (ADR 0042)."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, checked
from ecp_core.permissions import Permission
from ecp_core.runs.audit.readiness import AuditReadinessResponse
from ecp_core.webhooks.health import AuditDeliveryHealth
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.query import described

TAG = "audit"


@described(since="Start of the counted window (RFC 3339 with an offset); default 24 hours ago.")
@attrs.frozen(kw_only=True, field_transformer=checked)
class DeliveryHealthQuery:
    """The window the counters cover: from ``since`` up to now."""

    since: Annotated[datetime, AwareUtc()] | None = None


def audit_readiness(call: Call, services: Services) -> AuditReadinessResponse:
    """Whether the audit trail can be signed as the settings and the tenant's deployments need."""
    return services.ecp.audit_readiness.check(call.tenant)


def audit_delivery_health(call: Call, services: Services) -> AuditDeliveryHealth:
    """The tenant's webhook outbox: queued, delivered, retried, and the loss counters."""
    query: DeliveryHealthQuery = call.params
    return services.ecp.webhooks.delivery_health(call.tenant, query.since)


OPERATIONS = [
    Operation(
        method="GET",
        path="/v1/audit/readiness",
        handler=audit_readiness,
        operation_id="audit_readiness",
        tag=TAG,
        summary="Audit readiness: signing required, signer available, consequential actions",
        permission=Permission.AUDIT_READ,
        response=AuditReadinessResponse,
    ),
    Operation(
        method="GET",
        path="/v1/audit/delivery-health",
        handler=audit_delivery_health,
        operation_id="audit_delivery_health",
        tag=TAG,
        summary="Webhook delivery health over a window; only delivered is durable",
        permission=Permission.AUDIT_READ,
        response=AuditDeliveryHealth,
        query=DeliveryHealthQuery,
    ),
]
