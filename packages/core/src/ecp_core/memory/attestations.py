"""Attestations in memory: each correlation's history, newest last, under the store lock."""

from datetime import datetime

from ecp_core.attestations.model import Attestation
from ecp_core.memory.tables import Repository, detached

ATTESTATIONS = "attestations"


class MemoryAttestations(Repository):
    """AttestationRepository in memory (a memory unit of work holds the whole store)."""

    def _history(self, tenant_id: str, correlation_id: str) -> list[Attestation]:
        found: list[Attestation] = self._t.table(ATTESTATIONS).get((tenant_id, correlation_id), [])
        return found

    @detached
    def get(self, tenant_id: str, correlation_id: str) -> Attestation | None:
        """The latest attestation of the correlation (in force or expired), or None."""
        history = self._history(tenant_id, correlation_id)
        return history[-1] if history else None

    @detached
    def insert_first(self, attestation: Attestation) -> tuple[Attestation, bool]:
        """Store ``attestation`` unless another is in force at its ``issued_at``; first wins."""
        history = self._history(attestation.tenant_id, attestation.correlation_id)
        if history and history[-1].in_force(attestation.issued_at):
            return history[-1], False
        self._t.append(
            ATTESTATIONS, (attestation.tenant_id, attestation.correlation_id), attestation
        )
        return attestation, True

    @detached
    def current_for_deployment(
        self, tenant_id: str, deployment_ref: str, now: datetime
    ) -> Attestation | None:
        """The latest (by ``issued_at``) attestation of the deployment in force at ``now``."""
        live = [
            attestation
            for (tenant, _), history in self._t.table(ATTESTATIONS).items()
            if tenant == tenant_id
            for attestation in history
            if attestation.deployment_ref == deployment_ref and attestation.in_force(now)
        ]
        return max(live, key=lambda a: (a.issued_at, a.correlation_id), default=None)

    @detached
    def history(self, tenant_id: str, correlation_id: str) -> list[Attestation]:
        """Every attestation stored for the correlation, oldest first."""
        return list(self._history(tenant_id, correlation_id))


__all__ = ["MemoryAttestations"]
