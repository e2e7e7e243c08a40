"""The evidence store: writes and erasure of economic evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.billing import WithSubscriptions
from ecp_core.ports.entitlements import WithMeters
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from ecp_core.evidence.model import (
        ChargeRevision,
        Digested,
        ExecutionEvent,
        OutcomeDefinition,
        OutcomeEvent,
        SourceInventory,
    )
    from ecp_core.evidence.rows import ExecutionRow


class ExecutionBatchSource(Protocol):
    """A batch of execution events being read (a request's body), as the store asks for it.

    Both reads raise the batch's error when it is bad; nothing of the batch may then be kept.
    """

    def rows(self) -> Iterator[ExecutionRow]:
        """Checked rows in the batch's order, each as soon as it is read.

        The batch is known good only once the iterator is exhausted.
        """
        ...

    def events(self) -> Sequence[Digested[ExecutionEvent]]:
        """The batch's events, digested."""
        ...


class EvidenceStore(Protocol):
    """Economic evidence of a tenant: events, revisions, inventories, outcome definitions.

    Each ``add_*`` stores the items whose id is new and returns how many were already stored
    with the same digest (exact replays). An id stored with another digest raises Conflict and,
    as the unit of work then rolls back, nothing of the batch is kept. The readers of evidence
    own their read ports: ``ports.debugger``, ``ports.reconciliation``, ``ports.decisions``.
    """

    def add_executions(self, tenant_id: str, events: Sequence[Digested[ExecutionEvent]]) -> int:
        """Store execution events; also Conflict when a charge id belongs to another event."""
        ...

    def add_execution_body(self, tenant_id: str, body: ExecutionBatchSource) -> int:
        """:meth:`add_executions` of a batch being read (rows or events, as the store likes)."""
        ...

    def add_outcomes(self, tenant_id: str, events: Sequence[Digested[OutcomeEvent]]) -> int:
        """Store outcome assertions."""
        ...

    def add_revisions(self, tenant_id: str, events: Sequence[Digested[ChargeRevision]]) -> int:
        """Append charge-cost revisions."""
        ...

    def add_inventories(self, tenant_id: str, events: Sequence[Digested[SourceInventory]]) -> int:
        """Store source inventories."""
        ...

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        ...

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition; Conflict when the version has one."""
        ...

    def erase_run(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete execution and outcome events of this run id or these join keys; how many."""
        ...

    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        ...


class EvidenceUnit(Transaction, WithMeters, WithSubscriptions, Protocol):
    """What the evidence use cases need (subscription and meters: ingestion is metered)."""

    @property
    def evidence(self) -> EvidenceStore:
        """The evidence store."""
        ...


__all__ = ["EvidenceStore", "EvidenceUnit", "ExecutionBatchSource"]
