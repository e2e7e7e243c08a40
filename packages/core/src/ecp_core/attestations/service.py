"""Use cases of attestations: submit (first write wins), read, verify a presented copy."""

from collections.abc import Callable, Mapping, Sequence

from ecp_core.attestations.model import (
    Attestation,
    AttestationAck,
    AttestationResponse,
    AttestationSubmission,
    AttestationVerificationResponse,
)
from ecp_core.attestations.rules import acknowledge, issue, verify
from ecp_core.errors import NotFound
from ecp_core.ports.attestations import AttestationsUnit
from ecp_core.ports.system import Clock, Signer
from ecp_core.signing import KeyRing, PublicSigningKey


class AttestationService:
    """Server-signed attestations, one in force per (tenant, correlation id) (ADR 0041)."""

    def __init__(
        self,
        uow: Callable[[], AttestationsUnit],
        clock: Clock,
        signer: Signer | None,
        keys: Sequence[PublicSigningKey],
    ) -> None:
        """Sign with ``signer`` (None stores unsigned rows); verify with ``keys`` (retired too)."""
        self._uow = uow
        self._clock = clock
        self._signer = signer
        self._ring = KeyRing.of(keys)

    def submit(self, tenant_id: str, submission: AttestationSubmission) -> AttestationAck:
        """Issue, sign and store ``submission`` unless another holds its correlation."""
        attestation = issue(tenant_id, submission, self._clock.now(), self._signer)
        with self._uow() as uow:
            in_force, stored = uow.attestations.insert_first(attestation)
            uow.commit()
        return acknowledge(attestation, in_force, stored=stored)

    def get(self, tenant_id: str, correlation_id: str) -> Attestation:
        """The correlation's latest attestation (in force or expired); NotFound when none."""
        with self._uow() as uow:
            found = uow.attestations.get(tenant_id, correlation_id)
        if found is None:
            raise NotFound(f"attestation {correlation_id} not found")
        return found

    def history(self, tenant_id: str, correlation_id: str) -> list[Attestation]:
        """Every attestation of the correlation, oldest first (expired ones included)."""
        with self._uow() as uow:
            return uow.attestations.history(tenant_id, correlation_id)

    def read(self, tenant_id: str, correlation_id: str) -> AttestationResponse:
        """The correlation's latest attestation as it stands now (``in_force`` says whether)."""
        return AttestationResponse.of(self.get(tenant_id, correlation_id), self._clock.now())

    def verify(
        self, tenant_id: str, correlation_id: str, presented: Mapping[str, str | None]
    ) -> AttestationVerificationResponse:
        """Check the stored attestation's digest and signature and compare a presented copy."""
        stored = self.get(tenant_id, correlation_id)
        return verify(stored, presented, self._ring, self._clock.now())

    def current_for_deployment(self, tenant_id: str, deployment_ref: str) -> Attestation | None:
        """The deployment's latest attestation in force now, or None."""
        with self._uow() as uow:
            return uow.attestations.current_for_deployment(
                tenant_id, deployment_ref, self._clock.now()
            )


__all__ = ["AttestationService"]
