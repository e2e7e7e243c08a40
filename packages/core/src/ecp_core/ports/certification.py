"""Storage port of the certification area: certifications and their append-only events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.certification.model import (
        Certification,
        CertificationEvent,
        CertificationState,
    )


class CertificationRepository(Protocol):
    """Certifications, one per (tenant, app_name, app_commit, image_digest), and their events.

    Events are only ever appended: no method rewrites or removes one.
    """

    def add(self, certification: Certification, event: CertificationEvent) -> bool:
        """Store a new certification with its first event; False when its key or id is taken.

        The key is (tenant, app_name, app_commit, image_digest); False writes nothing. Atomic against concurrent callers: of racing adds of one key exactly one is stored.
        """
        ...

    def find(
        self, tenant_id: str, app_name: str, app_commit: str, image_digest: str
    ) -> Certification | None:
        """The tenant's certification of that build, or None."""
        ...

    def get(
        self, tenant_id: str, certification_id: str, *, lock: bool = False
    ) -> Certification | None:
        """One of the tenant's certifications (held until the unit of work ends with ``lock``)."""
        ...

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: str | None = None,
        app_name: str | None = None,
        state: CertificationState | None = None,
    ) -> list[Certification]:
        """Up to ``limit`` certifications by id (code point order), after ``after`` when given.

        Only those of ``app_name`` and in ``state`` when given.
        """
        ...

    def save(self, certification: Certification, event: CertificationEvent) -> None:
        """Replace a stored certification and append ``event``, its one change."""
        ...

    def events(self, tenant_id: str, certification_id: str) -> list[CertificationEvent]:
        """The certification's events in the order they were appended."""
        ...


class WithCertifications(Protocol):
    """A unit of work that reaches the certifications."""

    @property
    def certifications(self) -> CertificationRepository:
        """The stored certifications."""
        ...


class CertificationUnit(Transaction, WithCertifications, Protocol):
    """What the certification service needs of storage: its certifications, in one transaction."""


__all__ = ["CertificationRepository", "CertificationUnit", "WithCertifications"]
