"""Permissions and the one table that maps roles to them."""

import enum

from ecp_core.types import ServiceRole


class Permission(enum.StrEnum):
    """Named permissions; routes require one, roles grant them."""

    GRAPH_WRITE = "graph_write"
    GRAPH_READ = "graph_read"
    DEPLOYMENT_WRITE = "deployment_write"
    POLICY_WRITE = "policy_write"
    CONTRACT_WRITE = "contract_write"
    RUN_START = "run_start"
    RUN_READ = "run_read"
    RUN_RESUME = "run_resume"
    RUN_CONTROL = "run_control"
    TENANT_LIMITS = "tenant_limits"
    APPROVAL_RESOLVE = "approval_resolve"
    APPROVAL_READ = "approval_read"
    AUDIT_READ = "audit_read"
    RUN_LIST_ADMIN = "run_list_admin"
    API_KEY_ADMIN = "api_key_admin"
    RETENTION_ADMIN = "retention_admin"
    WEBHOOK_ADMIN = "webhook_admin"
    EVIDENCE_INGEST = "evidence_ingest"
    OUTCOME_DEFINE = "outcome_define"
    DEBUGGER_READ = "debugger_read"
    DECISION_REQUEST = "decision_request"
    BACKTEST_REQUEST = "backtest_request"
    REPORT_READ = "report_read"
    BILL_IMPORT = "bill_import"
    BILLING_CHECKOUT = "billing_checkout"
    TASK_WORK = "task_work"
    TASK_READ = "task_read"
    AUDIT_SETTINGS = "audit_settings"
    ATTESTATION_SUBMIT = "attestation_submit"
    CERTIFICATION_READ = "certification_read"
    CERTIFICATION_WRITE = "certification_write"
    CERTIFICATION_OVERRIDE = "certification_override"
    CERTIFICATION_PROMOTE = "certification_promote"
    CONNECTOR_READ = "connector_read"
    CONNECTOR_ADMIN = "connector_admin"
    CONNECTOR_TEST = "connector_test"
    TEMPLATE_WRITE = "template_write"
    LOG_READ = "log_read"


P = Permission

ROLE_PERMISSIONS: dict[ServiceRole, frozenset[Permission]] = {
    ServiceRole.ADMIN: frozenset(Permission),
    ServiceRole.OPERATOR: frozenset(
        {
            P.GRAPH_WRITE,
            P.GRAPH_READ,
            P.DEPLOYMENT_WRITE,
            P.POLICY_WRITE,
            P.CONTRACT_WRITE,
            P.RUN_START,
            P.RUN_READ,
            P.RUN_RESUME,
            P.RUN_CONTROL,
            P.APPROVAL_READ,
            P.AUDIT_READ,
            P.EVIDENCE_INGEST,
            P.TASK_READ,
            P.ATTESTATION_SUBMIT,
            P.CERTIFICATION_READ,
            P.CERTIFICATION_WRITE,
            P.CONNECTOR_READ,
            P.CONNECTOR_TEST,
            P.TEMPLATE_WRITE,
            P.LOG_READ,
        }
    ),
    ServiceRole.APPROVER: frozenset(
        {
            P.APPROVAL_RESOLVE,
            P.APPROVAL_READ,
            P.RUN_READ,
            P.GRAPH_READ,
            P.REPORT_READ,
            P.DEBUGGER_READ,
            P.CERTIFICATION_READ,
            P.LOG_READ,
        }
    ),
    ServiceRole.ANALYST: frozenset(
        {
            P.DEBUGGER_READ,
            P.DECISION_REQUEST,
            P.BACKTEST_REQUEST,
            P.REPORT_READ,
            P.GRAPH_READ,
            P.RUN_READ,  # the runs behind the figures, read-only (ADR 0081)
            P.LOG_READ,
        }
    ),
    ServiceRole.VIEWER: frozenset(
        {P.RUN_READ, P.AUDIT_READ, P.GRAPH_READ, P.CERTIFICATION_READ, P.LOG_READ}
    ),
    ServiceRole.WORKER: frozenset({P.TASK_WORK}),
}
"""Which role grants which permission: the single source of ``docs/api/permissions.md``."""


def permissions_of(
    roles: "tuple[ServiceRole, ...] | frozenset[ServiceRole]",
) -> frozenset[Permission]:
    """Everything the given roles grant together."""
    granted: frozenset[Permission] = frozenset()
    for role in roles:
        granted |= ROLE_PERMISSIONS[role]
    return granted
