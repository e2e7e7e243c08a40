"""The certification adapters are their port: a drift between them fails type-checking."""

from ecp_core.memory.certification import MemoryCertifications
from ecp_core.ports.certification import CertificationRepository
from ecp_postgres.certification import PostgresCertifications


def memory_certifications(x: MemoryCertifications) -> CertificationRepository:
    """MemoryCertifications is a CertificationRepository."""
    return x


def postgres_certifications(x: PostgresCertifications) -> CertificationRepository:
    """PostgresCertifications is a CertificationRepository."""
    return x
