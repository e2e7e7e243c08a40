"""The attestation adapters are their port: a drift between them fails type-checking."""

from ecp_core.memory.attestations import MemoryAttestations
from ecp_core.ports.attestations import AttestationRepository
from ecp_postgres.attestations import PostgresAttestations


def memory_attestations(x: MemoryAttestations) -> AttestationRepository:
    """MemoryAttestations is an AttestationRepository."""
    return x


def postgres_attestations(x: PostgresAttestations) -> AttestationRepository:
    """PostgresAttestations is an AttestationRepository."""
    return x
