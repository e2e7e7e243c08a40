"""The debugger's read port over evidence: tallies and outcome definitions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.debugger.tally import Tally, TallyQuery
    from ecp_core.evidence.model import OutcomeDefinition


class EvidenceTallies(Protocol):
    """The debugger's reads of evidence."""

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        ...

    def count_executions(self, tenant_id: str, query: TallyQuery, *, limit: int) -> int:
        """Execution events in the query's window, counting no further than ``limit``."""
        ...

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """Aggregate the window as :func:`ecp_core.debugger.tally.tally` defines."""
        ...


class DebuggerUnit(Transaction, Protocol):
    """What the debugger reads."""

    @property
    def evidence(self) -> EvidenceTallies:
        """Evidence, as the debugger reads it."""
        ...


__all__ = ["DebuggerUnit", "EvidenceTallies"]
