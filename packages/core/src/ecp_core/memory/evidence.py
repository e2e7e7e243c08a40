"""EvidenceRepository and ReconciliationRepository in memory (the reference implementations)."""

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ecp_core.debugger.tally import Tally, TallyQuery, in_window, tally
from ecp_core.decisions.selection import Selection, VersionWindow, select
from ecp_core.errors import Conflict
from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    SourceInventory,
)
from ecp_core.memory.repositories import _Repository, detached
from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow, provider_events
from ecp_core.reconciliation.model import StoredStatement

EXECUTIONS = "evidence_executions"
OUTCOMES = "evidence_outcomes"
REVISIONS = "evidence_revisions"
INVENTORIES = "evidence_inventories"
DEFINITIONS = "evidence_definitions"
CHARGES = "evidence_charges"
STATEMENTS = "provider_statements"


class MemoryEvidence(_Repository):
    """Evidence keyed by (tenant, event id); charges indexed by (tenant, charge id)."""

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
                    raise Conflict(f"event {entry.item.event_id} was stored with other content")
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
                raise Conflict(f"charge {charge_id} belongs to event {owner}")
            self._t.put(CHARGES, (tenant_id, charge_id), entry.item.event_id)

        return self._add(EXECUTIONS, tenant_id, events, own_charge)

    def add_outcomes(self, tenant_id: str, events: Sequence[Digested[OutcomeEvent]]) -> int:
        """Store outcome assertions."""
        return self._add(OUTCOMES, tenant_id, events)

    def add_revisions(self, tenant_id: str, events: Sequence[Digested[ChargeRevision]]) -> int:
        """Append charge-cost revisions."""
        return self._add(REVISIONS, tenant_id, events)

    def add_inventories(self, tenant_id: str, events: Sequence[Digested[SourceInventory]]) -> int:
        """Store source inventories."""
        return self._add(INVENTORIES, tenant_id, events)

    @detached
    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        found: OutcomeDefinition | None = self._t.table(DEFINITIONS).get(
            (tenant_id, workflow_id, workflow_version)
        )
        return found

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition."""
        key = (definition.tenant_id, definition.workflow_id, definition.workflow_version)
        if key in self._t.table(DEFINITIONS):
            raise Conflict(f"workflow version {definition.workflow_version} has a definition")
        self._t.put(DEFINITIONS, key, definition)

    def _items(self, table: str, tenant_id: str) -> list[Any]:
        return [
            entry.item for (tenant, _), entry in self._t.table(table).items() if tenant == tenant_id
        ]

    def count_executions(self, tenant_id: str, query: TallyQuery, *, limit: int) -> int:
        """Execution events in the window, counting no further than ``limit``."""
        count = 0
        if limit <= 0:
            return 0
        for event in self._items(EXECUTIONS, tenant_id):
            if in_window(event, query):
                count += 1
                if count >= limit:
                    break
        return count

    def _definitions(self, tenant_id: str) -> list[OutcomeDefinition]:
        return [
            definition
            for (tenant, _, _), definition in self._t.table(DEFINITIONS).items()
            if tenant == tenant_id
        ]

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """The reference aggregation over this tenant's evidence."""
        return tally(
            query,
            self._items(EXECUTIONS, tenant_id),
            self._items(OUTCOMES, tenant_id),
            self._items(REVISIONS, tenant_id),
            self._definitions(tenant_id),
        )

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """The reference selection for reconciliation, at most ``limit`` events."""
        return provider_events(
            window,
            self._items(EXECUTIONS, tenant_id),
            self._items(OUTCOMES, tenant_id),
            self._items(REVISIONS, tenant_id),
            self._definitions(tenant_id),
        )[:limit]

    def _digested(self, table: str, tenant_id: str) -> list[Digested[Any]]:
        return [entry for (tenant, _), entry in self._t.table(table).items() if tenant == tenant_id]

    def select(self, tenant_id: str, window: VersionWindow, *, limit: int) -> Selection:
        """The reference selection of one version's evidence (at most ``limit`` executions)."""
        found = select(
            window,
            self._digested(EXECUTIONS, tenant_id),
            self._digested(OUTCOMES, tenant_id),
            self._digested(REVISIONS, tenant_id),
            self.definition(tenant_id, window.workflow_id, window.workflow_version),
        )
        return attrs.evolve(found, executions=found.executions[:limit])

    @detached
    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        found: Digested[SourceInventory] | None = self._t.table(INVENTORIES).get(
            (tenant_id, event_id)
        )
        return found

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


class MemoryReconciliation(_Repository):
    """Statements keyed by (tenant, provider, statement_id)."""

    @detached
    def statement(self, tenant_id: str, provider: str, statement_id: str) -> StoredStatement | None:
        """One stored statement, or None."""
        found: StoredStatement | None = self._t.table(STATEMENTS).get(
            (tenant_id, provider, statement_id)
        )
        return found

    def add_statement(self, stored: StoredStatement) -> None:
        """Store a new statement."""
        key = (stored.tenant_id, stored.statement.provider, stored.statement.statement_id)
        if key in self._t.table(STATEMENTS):
            raise Conflict(f"statement {key[2]} of {key[1]} exists")
        self._t.put(STATEMENTS, key, stored)
