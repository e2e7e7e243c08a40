"""Certifications in memory: records by id, and each one's events as an append-only list."""

from ecp_core.certification.model import Certification, CertificationEvent, CertificationState
from ecp_core.memory.tables import Repository, detached

CERTIFICATIONS = "certifications"
EVENTS = "certification_events"


class MemoryCertifications(Repository):
    """CertificationRepository in memory (a memory unit of work holds the whole store)."""

    def add(self, certification: Certification, event: CertificationEvent) -> bool:
        """Store a new certification with its first event; False when its key or id is taken."""
        c = certification
        taken = c.certification_id in self._t.table(CERTIFICATIONS) or self.find(
            c.tenant_id, c.app_name, c.app_commit, c.image_digest
        )
        if taken:
            return False
        self._t.put(CERTIFICATIONS, c.certification_id, c)
        self._t.append(EVENTS, c.certification_id, event)
        return True

    @detached
    def find(
        self, tenant_id: str, app_name: str, app_commit: str, image_digest: str
    ) -> Certification | None:
        """The tenant's certification of that build, or None."""
        key = (tenant_id, app_name, app_commit, image_digest)
        for c in self._t.table(CERTIFICATIONS).values():
            if (c.tenant_id, c.app_name, c.app_commit, c.image_digest) == key:
                found: Certification = c
                return found
        return None

    @detached
    def get(
        self,
        tenant_id: str,
        certification_id: str,
        *,
        lock: bool = False,  # noqa: ARG002 - the store is held whole
    ) -> Certification | None:
        """One of the tenant's certifications."""
        found: Certification | None = self._t.table(CERTIFICATIONS).get(certification_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    @detached
    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: str | None = None,
        app_name: str | None = None,
        state: CertificationState | None = None,
    ) -> list[Certification]:
        """Certifications by id (code point order), filtered."""
        mine = sorted(
            (
                c
                for c in self._t.table(CERTIFICATIONS).values()
                if c.tenant_id == tenant_id
                and (after is None or c.certification_id > after)
                and (app_name is None or c.app_name == app_name)
                and (state is None or c.state is state)
            ),
            key=lambda c: c.certification_id,
        )
        return mine[:limit]

    def save(self, certification: Certification, event: CertificationEvent) -> None:
        """Replace a stored certification and append its event."""
        self._t.put(CERTIFICATIONS, certification.certification_id, certification)
        self._t.append(EVENTS, certification.certification_id, event)

    @detached
    def events(self, tenant_id: str, certification_id: str) -> list[CertificationEvent]:
        """The certification's events in the order they were appended."""
        stored: list[CertificationEvent] = self._t.table(EVENTS).get(certification_id, [])
        return [e for e in stored if e.tenant_id == tenant_id]


__all__ = ["MemoryCertifications"]
