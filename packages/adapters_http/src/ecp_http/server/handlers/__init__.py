"""The HTTP handlers: one module per area, each with a module-level ``OPERATIONS`` list."""

from ecp_http.server import console
from ecp_http.server.handlers import (
    account,
    actions,
    api_keys,
    approvals,
    attestations,
    audit_health,
    audit_settings,
    audit_trail,
    backtests,
    billing,
    certifications,
    cloud_auth,
    connectors,
    decisions,
    docs,
    evidence,
    graphs,
    health,
    limits,
    metrics,
    pages,
    reconciliation,
    retention,
    rollouts,
    run_control,
    runs,
    tasks,
    templates,
    transparency,
    webhooks,
)
from ecp_http.server.routing import Operation

__all__ = ["all_operations"]


def all_operations(
    *,
    metrics_enabled: bool = True,
    billing_enabled: bool = False,
    identity_enabled: bool = False,
) -> list[Operation]:
    """Every operation the server offers (``GET /metrics`` only while metrics are enabled).

    The billing routes exist only while billing is enabled (``ECP_BILLING_ENABLED``), the login
    routes and the hosted pages (``/``, ``/account``) only while the identity provider is
    (``ECP_IDP_AUTHKIT_ENABLED``).
    """
    return [
        *health.OPERATIONS,
        *graphs.OPERATIONS,
        *actions.OPERATIONS,
        *runs.OPERATIONS,
        *run_control.OPERATIONS,
        *limits.OPERATIONS,
        *approvals.OPERATIONS,
        *audit_trail.OPERATIONS,
        *transparency.OPERATIONS,
        *audit_settings.OPERATIONS,
        *tasks.OPERATIONS,
        *api_keys.OPERATIONS,
        *retention.OPERATIONS,
        *webhooks.OPERATIONS,
        *evidence.OPERATIONS,
        *reconciliation.OPERATIONS,
        *decisions.OPERATIONS,
        *backtests.OPERATIONS,
        *connectors.OPERATIONS,
        *certifications.OPERATIONS,
        *templates.OPERATIONS,
        *rollouts.OPERATIONS,
        *attestations.OPERATIONS,
        *audit_health.OPERATIONS,
        *docs.OPERATIONS,
        *console.OPERATIONS,
        *(metrics.OPERATIONS if metrics_enabled else ()),
        *(billing.OPERATIONS if billing_enabled else ()),
        *(
            (*cloud_auth.OPERATIONS, *pages.OPERATIONS, *account.OPERATIONS)
            if identity_enabled
            else ()
        ),
    ]
