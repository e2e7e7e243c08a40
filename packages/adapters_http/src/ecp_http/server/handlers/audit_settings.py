"""The tenant's audit settings: the digest version of its new records (ADR 0047)."""

from ecp_core.audit.settings import AuditSettings, AuditSettingsRequest
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "audit"
NEED = Permission.AUDIT_SETTINGS


def get_audit_settings(call: Call, services: Services) -> AuditSettings:
    """The digest version the tenant's new audit records use (2 unless it chose 3)."""
    return services.ecp.audit_settings.get(call.tenant)


def put_audit_settings(call: Call, services: Services) -> AuditSettings:
    """Choose the digest version of the tenant's records written from now on."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.audit_settings.put(call.actor, call.body)


OPERATIONS = [
    Operation(
        method="GET",
        path="/v1/audit/settings",
        handler=get_audit_settings,
        operation_id="audit_get_settings",
        tag=TAG,
        summary="The digest version of the tenant's new audit records (2 unless it chose 3)",
        permission=NEED,
        response=AuditSettings,
    ),
    Operation(
        method="PUT",
        path="/v1/audit/settings",
        handler=put_audit_settings,
        operation_id="audit_put_settings",
        tag=TAG,
        summary=(
            "Choose digest_version 2 or 3 (salted commitments) for records written from now on;"
            " earlier records keep theirs"
        ),
        permission=NEED,
        body=AuditSettingsRequest,
        response=AuditSettings,
    ),
]
