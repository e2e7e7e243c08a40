"""DecisionRepository, and the evidence reads comparisons make, on every store.

Retained artifacts are found by request digest and evidence fingerprint, counted per compared
subject, paged newest first, kept per tenant and read back exactly (floats and exponent-notation
cost strings included). Schedules are listed, come due in order, are claimed by a conditional
update (a stale claim changes nothing) and record their runs (:mod:`.repository`). Two
properties hold on random evidence (:mod:`.drawn`): an adapter's ``EvidenceRepository.select``
equals the in-memory reference (:func:`ecp_core.decisions.selection.select`) with either window
end, and a whole ``DecisionService.compare`` artifact is the same on both stores
(:mod:`.reference`).
"""

from ecp_core.testing.conformance.decisions.reference import DecisionsMatchReference
from ecp_core.testing.conformance.decisions.repository import DecisionRepositoryConformance

__all__ = ["DecisionRepositoryConformance", "DecisionsMatchReference"]
