"""The debugger's reads of evidence in memory: the core's tally over the stored events."""

from ecp_core.debugger.tally import Tally, TallyQuery, in_window, tally
from ecp_core.memory.evidence import EXECUTIONS, OUTCOMES, REVISIONS, EvidenceTables


class MemoryEvidenceTallies(EvidenceTables):
    """EvidenceTallies in memory: :func:`ecp_core.debugger.tally.tally` itself, the reference."""

    def count_executions(self, tenant_id: str, query: TallyQuery, *, limit: int) -> int:
        """Execution events in the window, counting no further than ``limit``."""
        count = 0
        if limit <= 0:
            return 0
        for event in self.items(EXECUTIONS, tenant_id):
            if in_window(event, query):
                count += 1
                if count >= limit:
                    break
        return count

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """The reference aggregation over this tenant's evidence."""
        return tally(
            query,
            self.items(EXECUTIONS, tenant_id),
            self.items(OUTCOMES, tenant_id),
            self.items(REVISIONS, tenant_id),
            self.definitions(tenant_id),
        )
