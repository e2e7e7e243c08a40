"""The HTTP handlers: one module per area, each with a module-level ``OPERATIONS`` list."""

from ecp_http.handlers import (
    actions,
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
    tasks,
    webhooks,
)
from ecp_http.routing import Operation

__all__ = ["all_operations"]


def all_operations(*, metrics_enabled: bool = True) -> list[Operation]:
    """Every operation the server offers (``GET /metrics`` only while metrics are enabled)."""
    return [
        *health.OPERATIONS,
        *graphs.OPERATIONS,
        *actions.OPERATIONS,
        *runs.OPERATIONS,
        *tasks.OPERATIONS,
        *api_keys.OPERATIONS,
        *retention.OPERATIONS,
        *webhooks.OPERATIONS,
        *evidence.OPERATIONS,
        *reconciliation.OPERATIONS,
        *decisions.OPERATIONS,
        *docs.OPERATIONS,
        *(metrics.OPERATIONS if metrics_enabled else ()),
    ]
