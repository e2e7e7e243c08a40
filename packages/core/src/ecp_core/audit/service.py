"""Use cases of the audit settings: read and choose a tenant's digest version (ADR 0047)."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from ecp_core.audit.record import DIGEST_VERSION
from ecp_core.audit.settings import AuditSettings, AuditSettingsRequest
from ecp_core.identity import ActorIdentity

if TYPE_CHECKING:
    from ecp_core.ports.audit import AuditRepository, AuditUnit
    from ecp_core.ports.system import Clock


def digest_version_for(audit: "AuditRepository", tenant_id: str) -> int:
    """The digest version a record written now for ``tenant_id`` uses."""
    stored = audit.settings(tenant_id)
    return DIGEST_VERSION if stored is None else stored.digest_version


class AuditSettingsService:
    """Reads and changes a tenant's audit settings."""

    def __init__(self, uow: Callable[[], "AuditUnit"], clock: "Clock") -> None:
        """Work in units of ``uow``; ``clock`` stamps each change."""
        self._uow = uow
        self._clock = clock

    def get(self, tenant_id: str) -> AuditSettings:
        """The tenant's settings (the defaults when it never chose)."""
        with self._uow() as uow:
            stored = uow.audit.settings(tenant_id)
        return stored or AuditSettings(tenant_id=tenant_id, digest_version=DIGEST_VERSION)

    def put(self, actor: ActorIdentity, request: AuditSettingsRequest) -> AuditSettings:
        """Choose the digest version of the actor's tenant's records written from now on."""
        changed = AuditSettings(
            tenant_id=actor.tenant_id,
            digest_version=request.digest_version,
            updated_at=self._clock.now(),
            updated_by=actor.subject,
        )
        with self._uow() as uow:
            uow.audit.save_settings(changed)
            uow.commit()
        return changed
