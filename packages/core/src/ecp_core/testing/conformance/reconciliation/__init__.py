"""Provider-bill reconciliation on every store: statements, provider events, whole reports.

The statements repository is checked on every store alike (exact round trip, one statement per
identity, tenants apart: :mod:`.statements`). Two properties then prove that an adapter agrees
with the in-memory reference on random evidence (:mod:`.drawn`, :mod:`.reference`): the provider
events it selects (priced after charge revisions, judged by outcome definitions) equal
:func:`ecp_core.reconciliation.matching.provider_events` as multisets, and the whole report of
the same statement over the same data is the same JSON on both stores.
"""

from ecp_core.testing.conformance.reconciliation.reference import ReconciliationMatchesReference
from ecp_core.testing.conformance.reconciliation.samples import spelled, stored_statement
from ecp_core.testing.conformance.reconciliation.statements import StatementRepositoryConformance

__all__ = [
    "ReconciliationMatchesReference",
    "StatementRepositoryConformance",
    "spelled",
    "stored_statement",
]
