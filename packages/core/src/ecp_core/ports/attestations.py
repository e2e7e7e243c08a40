"""Storage port of the attestations area: first write wins per (tenant, correlation id)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.attestations.model import Attestation


class AttestationRepository(Protocol):
    """Attestations by (tenant, correlation id); an expired one stays as history.

    At most one attestation of a correlation is in force at any instant: a new one is stored
    only once the previous one expired, so every unexpired stored attestation is in force.
    """

    def get(self, tenant_id: str, correlation_id: str) -> Attestation | None:
        """The latest attestation of the correlation (in force or expired), or None."""
        ...

    def insert_first(self, attestation: Attestation) -> tuple[Attestation, bool]:
        """Store ``attestation`` unless another is in force at its ``issued_at``; first wins.

        Returns the one in force afterwards and whether it is ``attestation``, stored by this
        call (else the one that holds the correlation, and False). Atomic against concurrent
        callers: of any number of racing submissions for one correlation exactly one is stored.
        """
        ...

    def current_for_deployment(
        self, tenant_id: str, deployment_ref: str, now: datetime
    ) -> Attestation | None:
        """The latest (by ``issued_at``) attestation of the deployment in force at ``now``."""
        ...

    def history(self, tenant_id: str, correlation_id: str) -> list[Attestation]:
        """Every attestation stored for the correlation, oldest first."""
        ...


class WithAttestations(Protocol):
    """A unit of work that reaches the attestations."""

    @property
    def attestations(self) -> AttestationRepository:
        """The stored attestations."""
        ...


class AttestationsUnit(Transaction, WithAttestations, Protocol):
    """What the attestation service needs: the attestations, in one transaction."""


__all__ = ["AttestationRepository", "AttestationsUnit", "WithAttestations"]
