"""The evidence store in memory: writes and erasure over the evidence tables.

The evidence tables are read by their consumers' adapters too: the debugger's tallies
(:mod:`ecp_core.memory.debugger`), reconciliation's provider events
(:mod:`ecp_core.memory.reconciliation`) and the decisions' version selection
(:mod:`ecp_core.memory.decisions`), each through :class:`EvidenceTables`.
"""

from collections.abc import Callable, Sequence
from typing import Any

from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    SourceInventory,
    changed_replay,
    charge_taken,
    definition_taken,
)
from ecp_core.memory.tables import Repository, detached
from ecp_core.ports.evidence import ExecutionBatchSource

EXECUTIONS = "evidence_executions"
OUTCOMES = "evidence_outcomes"
REVISIONS = "evidence_revisions"
INVENTORIES = "evidence_inventories"
DEFINITIONS = "evidence_definitions"
CHARGES = "evidence_charges"


class EvidenceTables(Repository):
    """Evidence keyed by (tenant, event id), definitions by (tenant, workflow, version)."""

    def items(self, table: str, tenant_id: str) -> list[Any]:
        """The tenant's events of one table."""
        return [entry.item for entry in self.digested(table, tenant_id)]

    def digested(self, table: str, tenant_id: str) -> list[Digested[Any]]:
        """The tenant's events of one table, with their digests."""
        return [entry for (tenant, _), entry in self._t.table(table).items() if tenant == tenant_id]

    def definitions(self, tenant_id: str) -> list[OutcomeDefinition]:
        """Every outcome definition of the tenant."""
        return [
            definition
            for (tenant, _, _), definition in self._t.table(DEFINITIONS).items()
            if tenant == tenant_id
        ]

    @detached
    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        found: OutcomeDefinition | None = self._t.table(DEFINITIONS).get(
            (tenant_id, workflow_id, workflow_version)
        )
        return found

    @detached
    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        found: Digested[SourceInventory] | None = self._t.table(INVENTORIES).get(
            (tenant_id, event_id)
        )
        return found


class MemoryEvidenceStore(EvidenceTables):
    """EvidenceStore in memory; charges are indexed by (tenant, charge id)."""

    def _add(
        self,
        table: str,
        tenant_id: str,
        items: Sequence[Digested[Any]],
        also: Callable[[Digested[Any]], None] | None = None,
    ) -> int:
        stored = self._t.table(table)
        replayed = 0
        for entry in items:
            key = (tenant_id, entry.item.event_id)
            found = stored.get(key)
            if found is not None:
                if found.digest != entry.digest:
                    raise changed_replay(entry.item.event_id)
                replayed += 1
                continue
            if also is not None:
                also(entry)
            self._t.put(table, key, entry)
        return replayed

    def add_executions(self, tenant_id: str, events: Sequence[Digested[ExecutionEvent]]) -> int:
        """Store execution events; a charge id belongs to one event."""
        charges = self._t.table(CHARGES)

        def own_charge(entry: Digested[Any]) -> None:
            charge_id = entry.item.charge_id
            if charge_id is None:
                return
            owner = charges.get((tenant_id, charge_id))
            if owner is not None and owner != entry.item.event_id:
                raise charge_taken(charge_id, owner)
            self._t.put(CHARGES, (tenant_id, charge_id), entry.item.event_id)

        # In id order, as PostgreSQL writes a batch: of two new events with one charge id, the
        # first by id owns it and the refusal names it.
        ordered = sorted(events, key=lambda entry: entry.item.event_id)
        return self._add(EXECUTIONS, tenant_id, ordered, own_charge)

    def add_execution_body(self, tenant_id: str, body: ExecutionBatchSource) -> int:
        """Store the events of a batch being read."""
        return self.add_executions(tenant_id, body.events())

    def add_outcomes(self, tenant_id: str, events: Sequence[Digested[OutcomeEvent]]) -> int:
        """Store outcome assertions."""
        return self._add(OUTCOMES, tenant_id, events)

    def add_revisions(self, tenant_id: str, events: Sequence[Digested[ChargeRevision]]) -> int:
        """Append charge-cost revisions."""
        return self._add(REVISIONS, tenant_id, events)

    def add_inventories(self, tenant_id: str, events: Sequence[Digested[SourceInventory]]) -> int:
        """Store source inventories."""
        return self._add(INVENTORIES, tenant_id, events)

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition."""
        key = (definition.tenant_id, definition.workflow_id, definition.workflow_version)
        if key in self._t.table(DEFINITIONS):
            raise definition_taken(definition.workflow_version)
        self._t.put(DEFINITIONS, key, definition)

    def erase_run(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete execution and outcome events of this run id or these join keys."""
        keys = set(join_keys)
        erased = 0
        for table in (EXECUTIONS, OUTCOMES):
            doomed = [
                key
                for key, entry in self._t.table(table).items()
                if key[0] == tenant_id
                and (entry.item.run_id == run_id or entry.item.join_key in keys)
            ]
            for key in doomed:
                charge_id = getattr(self._t.table(table)[key].item, "charge_id", None)
                if charge_id is not None:
                    self._t.remove(CHARGES, (tenant_id, charge_id))
                self._t.remove(table, key)
            erased += len(doomed)
        return erased


__all__ = ["EvidenceTables", "MemoryEvidenceStore"]
