"""Evidence: the kit's suite on memory and PostgreSQL, and PostgreSQL against the reference.

The reference property proves the PostgreSQL aggregation (one SQL statement) equals the
reference in :mod:`ecp_core.debugger.tally` (what the memory adapter runs) on random evidence,
and the provider events of reconciliation equal :mod:`ecp_core.reconciliation.matching`'s.
"""

import pytest
from tests.support.stores import OnEveryStore, OnPostgresEachExample

from ecp_core.testing.conformance.evidence import (
    EvidenceMatchesReference,
    EvidenceRepositoryConformance,
)

pytestmark = pytest.mark.contract


class TestEvidenceRepository(OnEveryStore, EvidenceRepositoryConformance):
    pass


class TestPostgresEvidenceMatchesReference(OnPostgresEachExample, EvidenceMatchesReference):
    pass
