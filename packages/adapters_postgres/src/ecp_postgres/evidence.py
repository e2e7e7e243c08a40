"""The evidence store on PostgreSQL: bulk idempotent ingestion, erasure, and the evidence rows.

Batches are written by :class:`~ecp_postgres.evidence_batches.EvidenceBatches` (COPY straight
into the table, or COPY to a staging table and merge when the batch holds replays, ADR 0060).

The evidence tables are read by their consumers' adapters too, through :class:`EvidenceRows`:
the debugger's tally (:mod:`ecp_postgres.debugger`), reconciliation's provider events
(:mod:`ecp_postgres.reconciliation`) and the decisions' version selection
(:mod:`ecp_postgres.decisions`).
"""

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ecp_core.evidence.model import (
    MAX_SAFE_INTEGER,
    ChargeRevision,
    CostRole,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    SourceInventory,
    definition_taken,
)
from ecp_core.evidence.rows import execution_row
from ecp_core.ports.evidence import ExecutionBatchSource
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure
from ecp_postgres.evidence_batches import (
    INVENTORIES,
    OUTCOMES,
    REVISIONS,
    EvidenceBatches,
)
from ecp_postgres.rows import Repository, Table

DEFINITIONS = Table("ecp_evidence_definitions", OutcomeDefinition, json=["predicate"])

WORK_MEM = "16MB"
"""``work_mem`` of a statement over a whole window (see :meth:`EvidenceRows.whole_window`)."""


# --- rows back to events ------------------------------------------------------------------------


def _as_written(value: Any) -> Any:  # noqa: ANN401 - a JSON scalar read back from jsonb
    """A number beyond the safe integers can only have been written as a float: read it so."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return float(value)
    return value


def _attributes(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _as_written(value) for key, value in values.items()}


def execution_of(row: dict[str, Any]) -> ExecutionEvent:
    """An execution event from its row."""
    return ExecutionEvent(
        event_id=row["event_id"],
        workflow_id=row["workflow_id"],
        workflow_version=row["workflow_version"],
        occurred_at=row["occurred_at"],
        run_id=row["run_id"],
        step_id=row["step_id"],
        attempt=row["attempt"],
        subject_id=row["subject_id"],
        dimensions=_attributes(row["dimensions"]),
        cost_usd=row["cost_usd"],
        cost_measurement=CostMeasurement(row["cost_measurement"]),
        cost_role=CostRole(row["cost_role"]),
        charge_id=row["charge_id"],
        source_window_id=row["source_window_id"],
        join_key=row["join_key"],
        metadata=_attributes(row["metadata"]),
    )


def outcome_of(row: dict[str, Any]) -> OutcomeEvent:
    """An outcome event from its row."""
    return OutcomeEvent(
        event_id=row["event_id"],
        workflow_id=row["workflow_id"],
        workflow_version=row["workflow_version"],
        run_id=row["run_id"],
        outcome_type=row["outcome_type"],
        asserted_at=row["asserted_at"],
        value=_as_written(row["value"]),
        outcome_measurement=OutcomeMeasurement(row["outcome_measurement"]),
        maturity=OutcomeMaturity(row["maturity"]),
        subject_id=row["subject_id"],
        join_key=row["join_key"],
    )


def revision_of(row: dict[str, Any]) -> ChargeRevision:
    """A charge revision from its row."""
    return ChargeRevision(
        event_id=row["event_id"],
        charge_id=row["charge_id"],
        revised_at=row["revised_at"],
        cost_usd=row["cost_usd"],
        cost_measurement=CostMeasurement(row["cost_measurement"]),
    )


class EvidenceRows(Repository):
    """What every evidence adapter reads: definitions, inventories, whole-window settings."""

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        return self._one(
            DEFINITIONS,
            "tenant_id = %s AND workflow_id = %s AND workflow_version = %s",
            (tenant_id, workflow_id, workflow_version),
        )

    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        row = self._conn.execute(
            "SELECT * FROM ecp_evidence_inventories WHERE tenant_id = %s AND event_id = %s",
            (tenant_id, event_id),
        ).fetchone()
        if row is None:
            return None
        data = {
            "event_id": row["event_id"],
            "workflow_id": row["workflow_id"],
            "workflow_version": row["workflow_version"],
            "capture_start": row["capture_start"].isoformat(),
            "capture_end": row["capture_end"].isoformat(),
            "terminal_run_ids": row["terminal_run_ids"],
            "windows": row["windows"],
        }
        return Digested(structure(data, SourceInventory), row["digest"])

    @contextlib.contextmanager
    def whole_window(self) -> Iterator[None]:
        """The settings a statement over a whole window is written for, for its duration.

        Hash and merge joins only: with statistics that do not know a tenant's rows yet (a
        tenant that has just ingested its first events), the planner would otherwise pick
        nested loops over the window and take minutes instead of milliseconds. And enough
        ``work_mem`` for the tally's (group, run) pairs and event rows to stay in memory
        (50,000 events need about 12 MB; the default is 4 MB).
        """
        previous = self._conn.execute(
            "SELECT current_setting('enable_nestloop') AS nestloop,"
            " current_setting('work_mem') AS work_mem,"
            " set_config('enable_nestloop', 'off', true), set_config('work_mem', %s, true)",
            (WORK_MEM,),
        ).fetchone()
        assert previous is not None  # noqa: S101 - a SELECT without FROM answers
        yield
        self._conn.execute(
            "SELECT set_config('enable_nestloop', %s, true), set_config('work_mem', %s, true)",
            (previous["nestloop"], previous["work_mem"]),
        )


class PostgresEvidenceStore(EvidenceRows, EvidenceBatches):
    """EvidenceStore on PostgreSQL; see the module's docstring."""

    def add_executions(self, tenant_id: str, events: Sequence[Digested[ExecutionEvent]]) -> int:
        """Store execution events; a charge id belongs to one event."""
        return self.add_execution_rows(tenant_id, map(execution_row, events))

    def add_execution_body(self, tenant_id: str, body: ExecutionBatchSource) -> int:
        """Store a batch as it is read: its rows are COPYed while later events are checked."""
        return self.add_execution_rows(tenant_id, body.rows())

    def add_outcomes(self, tenant_id: str, events: Sequence[Digested[OutcomeEvent]]) -> int:
        """Store outcome assertions."""
        return self._add_entries(OUTCOMES, tenant_id, events)

    def add_revisions(self, tenant_id: str, events: Sequence[Digested[ChargeRevision]]) -> int:
        """Append charge-cost revisions."""
        return self._add_entries(REVISIONS, tenant_id, events)

    def add_inventories(self, tenant_id: str, events: Sequence[Digested[SourceInventory]]) -> int:
        """Store source inventories."""
        return self._add_entries(INVENTORIES, tenant_id, events)

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition; Conflict when the version has one."""
        self._insert(DEFINITIONS, definition, definition_taken(definition.workflow_version))

    def erase_run(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete execution and outcome events of this run id or these join keys; how many."""
        matches = (
            "tenant_id = %(tenant)s AND (run_id = %(run)s OR join_key = ANY(%(keys)s::text[]))"
        )
        row = self._conn.execute(
            f"WITH executions AS (DELETE FROM ecp_evidence_executions WHERE {matches}"  # noqa: S608
            " RETURNING 1),"
            f" outcomes AS (DELETE FROM ecp_evidence_outcomes WHERE {matches} RETURNING 1)"
            " SELECT (SELECT count(*) FROM executions) + (SELECT count(*) FROM outcomes) AS n",
            {"tenant": tenant_id, "run": run_id, "keys": list(join_keys)},
        ).fetchone()
        assert row is not None  # noqa: S101 - the SELECT always answers
        return int(row["n"])
