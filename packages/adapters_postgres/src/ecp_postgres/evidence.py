"""The evidence store on PostgreSQL: bulk idempotent ingestion, erasure, and the evidence rows.

Ingestion first COPYs a batch straight into its table (inside a savepoint): a batch of new
events, the common case, costs what COPY costs. When an id or a charge id is already taken the
COPY fails on the unique index, the savepoint undoes it, and the batch goes through one
``INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING RETURNING``; the rows it skipped are
exact replays (same id, same digest) or conflicts (another digest, or a charge id another event
owns), which one more statement tells apart.

The evidence tables are read by their consumers' adapters too, through :class:`EvidenceRows`:
the debugger's tally (:mod:`ecp_postgres.debugger`), reconciliation's provider events
(:mod:`ecp_postgres.reconciliation`) and the decisions' version selection
(:mod:`ecp_postgres.decisions`).
"""

import contextlib
import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import psycopg

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
    changed_replay,
    charge_taken,
    definition_taken,
)
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure
from ecp_postgres.rows import Repository, Table

T = TypeVar("T")

DEFINITIONS = Table("ecp_evidence_definitions", OutcomeDefinition, json=["predicate"])

WORK_MEM = "16MB"
"""``work_mem`` of a statement over a whole window (see :meth:`EvidenceRows.whole_window`)."""


def _json(value: Any) -> str:  # noqa: ANN401 - any JSON value
    """JSON text (floats by their shortest repr, as the digest's canonical JSON has them)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def _enum(value: Any) -> Any:  # noqa: ANN401 - an enum member
    return value.value


class _Events(Generic[T]):
    """One event type in one table: its columns, their array types, and how items fill them."""

    def __init__(
        self,
        table: str,
        columns: Sequence[tuple[str, str, Callable[[Any], Any] | None]],
    ) -> None:
        """``columns``: (column, SQL array type, converter or None) after tenant, id, digest."""
        self.table = table
        self.columns = tuple(columns)
        names = ", ".join(name for name, _, _ in self.columns)
        arrays = ", ".join(f"%s::{kind}[]" for _, kind, _ in self.columns)
        self.copy = f"COPY {table} (tenant_id, event_id, digest, {names}) FROM STDIN"
        self.insert = (
            f"INSERT INTO {table} (tenant_id, event_id, digest, {names})"  # noqa: S608 - constants
            f" SELECT %s, * FROM unnest(%s::text[], %s::text[], {arrays})"
            " ON CONFLICT DO NOTHING RETURNING event_id, digest"
        )
        self.differing = (
            "SELECT b.event_id, s.digest AS stored"  # noqa: S608 - constants
            " FROM unnest(%s::text[], %s::text[]) AS b(event_id, digest)"
            f" LEFT JOIN {table} s ON s.tenant_id = %s AND s.event_id = b.event_id"
            " WHERE s.digest IS DISTINCT FROM b.digest ORDER BY b.event_id LIMIT 1"
        )

    def values(self, entries: Sequence[Digested[T]]) -> list[list[Any]]:
        """One list per column after the tenant: event ids, digests, then the model's columns."""
        items = [entry.item for entry in entries]
        values: list[list[Any]] = [
            [getattr(item, "event_id") for item in items],  # noqa: B009 - T is any event
            [entry.digest for entry in entries],
        ]
        for name, _, convert in self.columns:
            column = [getattr(item, name) for item in items]
            if convert is not None:
                column = [None if value is None else convert(value) for value in column]
            values.append(column)
        return values


EXECUTIONS: _Events[ExecutionEvent] = _Events(
    "ecp_evidence_executions",
    [
        ("workflow_id", "text", None),
        ("workflow_version", "text", None),
        ("occurred_at", "timestamptz", None),
        ("run_id", "text", None),
        ("step_id", "text", None),
        ("attempt", "int4", None),
        ("subject_id", "text", None),
        ("dimensions", "jsonb", _json),
        ("cost_usd", "numeric", None),
        ("cost_measurement", "text", _enum),
        ("cost_role", "text", _enum),
        ("charge_id", "text", None),
        ("source_window_id", "text", None),
        ("join_key", "text", None),
        ("metadata", "jsonb", _json),
    ],
)
OUTCOMES: _Events[OutcomeEvent] = _Events(
    "ecp_evidence_outcomes",
    [
        ("workflow_id", "text", None),
        ("workflow_version", "text", None),
        ("run_id", "text", None),
        ("outcome_type", "text", None),
        ("asserted_at", "timestamptz", None),
        ("value", "jsonb", _json),
        ("outcome_measurement", "text", _enum),
        ("maturity", "text", _enum),
        ("subject_id", "text", None),
        ("join_key", "text", None),
    ],
)
REVISIONS: _Events[ChargeRevision] = _Events(
    "ecp_evidence_revisions",
    [
        ("charge_id", "text", None),
        ("revised_at", "timestamptz", None),
        ("cost_usd", "numeric", None),
        ("cost_measurement", "text", _enum),
    ],
)
INVENTORIES: _Events[SourceInventory] = _Events(
    "ecp_evidence_inventories",
    [
        ("workflow_id", "text", None),
        ("workflow_version", "text", None),
        ("capture_start", "timestamptz", None),
        ("capture_end", "timestamptz", None),
        ("terminal_run_ids", "jsonb", lambda ids: _json(list(ids))),
        ("windows", "jsonb", lambda windows: _json(unstructure(list(windows)))),
    ],
)


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


class PostgresEvidenceStore(EvidenceRows):
    """EvidenceStore on PostgreSQL; see the module's docstring."""

    def _add(
        self,
        events: _Events[Any],
        tenant_id: str,
        entries: Sequence[Digested[Any]],
        owner: Callable[[Digested[Any]], str | None] | None = None,
    ) -> int:
        """Insert what is new; return the exact replays; Conflict on anything else."""
        if not entries:
            return 0
        # Sorted by id, concurrent batches lock their rows in one order (no deadlock).
        ordered = sorted(entries, key=lambda entry: entry.item.event_id)
        values = events.values(ordered)
        if self._copied(events, tenant_id, values):
            return 0
        with self._conn.cursor() as cursor:
            cursor.execute(events.insert, [tenant_id, *values])
            inserted = Counter((row["event_id"], row["digest"]) for row in cursor.fetchall())
        if len(ordered) == inserted.total():
            return 0
        skipped = []
        for entry in ordered:
            key = (entry.item.event_id, entry.digest)
            if inserted[key] > 0:
                inserted[key] -= 1
            else:
                skipped.append(entry)
        row = self._conn.execute(
            events.differing,
            (
                [entry.item.event_id for entry in skipped],
                [entry.digest for entry in skipped],
                tenant_id,
            ),
        ).fetchone()
        if row is None:
            return len(skipped)
        event_id = row["event_id"]
        if row["stored"] is None and owner is not None:
            entry = next(entry for entry in skipped if entry.item.event_id == event_id)
            charge = owner(entry)
            if charge is not None:
                raise charge_taken(charge, self._owner(tenant_id, charge))
        raise changed_replay(event_id)

    def _copied(self, events: _Events[Any], tenant_id: str, values: list[list[Any]]) -> bool:
        """COPY a batch of new events (the common case, at COPY's speed); False on any replay.

        A batch with an id (or charge id) already taken fails on the unique index; the
        savepoint undoes the partial COPY and leaves the transaction usable for the slow path.
        """
        self._conn.execute("SAVEPOINT ecp_evidence_batch")
        try:
            with self._conn.cursor() as cursor, cursor.copy(events.copy) as copy:
                for row in zip(itertools.repeat(tenant_id), *values):
                    copy.write_row(row)
        except psycopg.errors.UniqueViolation:
            self._conn.execute("ROLLBACK TO SAVEPOINT ecp_evidence_batch")
            return False
        self._conn.execute("RELEASE SAVEPOINT ecp_evidence_batch")
        return True

    def _owner(self, tenant_id: str, charge_id: str) -> str | None:
        row = self._conn.execute(
            "SELECT event_id FROM ecp_evidence_executions WHERE tenant_id = %s AND charge_id = %s",
            (tenant_id, charge_id),
        ).fetchone()
        return None if row is None else str(row["event_id"])

    def add_executions(self, tenant_id: str, events: Sequence[Digested[ExecutionEvent]]) -> int:
        """Store execution events; a charge id belongs to one event."""
        return self._add(EXECUTIONS, tenant_id, events, lambda entry: entry.item.charge_id)

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
