"""Evidence repository: idempotent ingestion, charge ownership, definitions, erasure, the tally.

Worked examples on every store (:mod:`.ingestion`, :mod:`.reads`); and the reference property
(:mod:`.reference`), which proves an adapter's aggregation (in PostgreSQL, one SQL statement)
equals the reference in :mod:`ecp_core.debugger.tally` (what the memory adapter runs) on random
evidence, and the provider events of reconciliation equal :mod:`ecp_core.reconciliation.matching`'s.
"""

from ecp_core.testing.conformance.evidence.ingestion import EvidenceIngestionConformance
from ecp_core.testing.conformance.evidence.reads import EvidenceReadsConformance
from ecp_core.testing.conformance.evidence.reference import EvidenceMatchesReference


class EvidenceRepositoryConformance(EvidenceIngestionConformance, EvidenceReadsConformance):
    """Evidence: idempotent ingestion, charge ownership, definitions, erasure, the tally."""


__all__ = [
    "EvidenceIngestionConformance",
    "EvidenceMatchesReference",
    "EvidenceReadsConformance",
    "EvidenceRepositoryConformance",
]
