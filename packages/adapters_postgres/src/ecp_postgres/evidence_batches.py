"""Evidence batches into PostgreSQL: COPY straight into the table, or COPY to stage and merge.

A batch of new events, the common case, is COPYed straight into its table inside a savepoint:
it costs what COPY costs. Rows are written as they come: execution events arrive as checked
rows (:class:`~ecp_core.evidence.rows.ExecutionRow`) while the body is still being read, so
PostgreSQL stores the first events while later ones are checked; an error in a later event
abandons the COPY. Rows go to psycopg as text (timestamps, amounts and JSON rendered before),
which formats them about five times faster than typed values. Concurrent batches must lock
their rows in one order (by event id): an id below the one before stops the streamed COPY, and
the batch is sorted and COPYed again. When an event id or a charge id is already taken, the COPY
fails on a unique index, the savepoint undoes it, and the batch is merged instead (ADR 0060):

1. COPY into a temporary staging table (``ON COMMIT DELETE ROWS``: created once per session, no
   WAL, emptied by the commit or the rollback that ends the transaction);
2. one ``INSERT ... SELECT ... ORDER BY event_id ON CONFLICT DO NOTHING`` into the table, in id
   order so that concurrent batches lock their rows in one order;
3. one statement that empties the staging table and names the first staged event (by id) whose
   stored digest differs: none means the skipped events were exact replays; a stored digest
   means a changed replay; no stored row means the event's charge id belongs to another event.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from operator import itemgetter
from typing import Any, Generic, TypeVar

import psycopg

from ecp_core.canonical import canonical_json
from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    OutcomeEvent,
    SourceInventory,
    changed_replay,
    charge_taken,
)
from ecp_core.evidence.rows import ExecutionRow
from ecp_core.wire import unstructure
from ecp_postgres.rows import Repository
from ecp_postgres.session import roll_back_to

T = TypeVar("T")
Convert = Callable[[Any], Any]
Row = Sequence[Any]
"""A COPY row after the tenant: event id, digest, then the event's columns."""
_event_id = itemgetter(0)


def _json(value: Any) -> str:  # noqa: ANN401 - any JSON value
    """JSON text for a jsonb column: the canonical one (the quickest encoder at hand)."""
    return canonical_json(value).decode("utf-8")


def _enum(value: Any) -> Any:  # noqa: ANN401 - an enum member
    return value.value


def _timestamp(value: datetime) -> str:
    return value.isoformat()


def _numeric(value: Decimal) -> str:
    return str(value)


class EventTable(Generic[T]):
    """One event type in one table: its columns, how an item fills them, and its statements."""

    def __init__(self, table: str, columns: Sequence[tuple[str, Convert | None]]) -> None:
        """``columns``: (column, converter to COPY text or None) after tenant, id and digest."""
        self.table = table
        self.columns = tuple(columns)
        names = ", ".join(("tenant_id", "event_id", "digest", *(name for name, _ in columns)))
        staging = f"ecp_staged_{table.removeprefix('ecp_')}"
        self.copy = f"COPY {table} ({names}) FROM STDIN"
        self.stage = (
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging}"
            f" (ordinal int4 NOT NULL, LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
        self.copy_staged = f"COPY {staging} (ordinal, {names}) FROM STDIN"
        self.merge = (
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {staging}"  # noqa: S608 - constants
            " ORDER BY event_id, ordinal ON CONFLICT DO NOTHING"
        )
        self.differing = (
            f"WITH staged AS (DELETE FROM {staging} RETURNING tenant_id, event_id, digest, ordinal)"  # noqa: S608
            " SELECT b.ordinal, b.event_id, s.digest AS stored FROM staged b"
            f" LEFT JOIN {table} s ON s.tenant_id = b.tenant_id AND s.event_id = b.event_id"
            " WHERE s.digest IS DISTINCT FROM b.digest ORDER BY b.event_id, b.ordinal LIMIT 1"
        )

    def rows(self, entries: Iterable[Digested[T]]) -> Iterator[Row]:
        """The COPY rows of ``entries`` (after the tenant): event id, digest, the columns."""
        columns = self.columns
        for entry in entries:
            item = entry.item
            row: list[Any] = [getattr(item, "event_id"), entry.digest]  # noqa: B009
            for name, convert in columns:
                value = getattr(item, name)
                row.append(value if convert is None or value is None else convert(value))
            yield row


# Execution events come as checked rows, already text: their columns are the row's fields.
EXECUTIONS: EventTable[ExecutionEvent] = EventTable(
    "ecp_evidence_executions", [(name, None) for name in ExecutionRow._fields[2:]]
)
OUTCOMES: EventTable[OutcomeEvent] = EventTable(
    "ecp_evidence_outcomes",
    [
        ("workflow_id", None),
        ("workflow_version", None),
        ("run_id", None),
        ("outcome_type", None),
        ("asserted_at", _timestamp),
        ("value", _json),
        ("outcome_measurement", _enum),
        ("maturity", _enum),
        ("subject_id", None),
        ("join_key", None),
    ],
)
REVISIONS: EventTable[ChargeRevision] = EventTable(
    "ecp_evidence_revisions",
    [
        ("charge_id", None),
        ("revised_at", _timestamp),
        ("cost_usd", _numeric),
        ("cost_measurement", _enum),
    ],
)
INVENTORIES: EventTable[SourceInventory] = EventTable(
    "ecp_evidence_inventories",
    [
        ("workflow_id", None),
        ("workflow_version", None),
        ("capture_start", _timestamp),
        ("capture_end", _timestamp),
        ("terminal_run_ids", lambda ids: _json(list(ids))),
        ("windows", lambda windows: _json(unstructure(list(windows)))),
    ],
)


class _Unordered(Exception):
    """An event id below the one before: the streamed COPY stops, the batch is sorted."""


class EvidenceBatches(Repository):
    """Idempotent batch writes of evidence events; see the module's docstring."""

    def add_execution_rows(self, tenant_id: str, rows: Iterable[ExecutionRow]) -> int:
        """Store checked execution rows, COPYed as they come; the exact replays."""
        return self._add(EXECUTIONS, tenant_id, rows, _charge_of)

    def _add_entries(
        self, events: EventTable[Any], tenant_id: str, entries: Sequence[Digested[Any]]
    ) -> int:
        return self._add(events, tenant_id, events.rows(entries))

    def _add(
        self,
        events: EventTable[Any],
        tenant_id: str,
        items: Iterable[Row],
        owner: Callable[[Row], str | None] | None = None,
    ) -> int:
        """Insert what is new; return the exact replays; Conflict on anything else."""
        rows: list[Row] = []
        stream = iter(items)
        copied = self._streamed(events.copy, tenant_id, stream, rows)
        if copied or not rows:
            return 0
        if copied is None:  # an id out of order: sort the batch and COPY it whole
            rows.extend(stream)
            # Sorted by id, concurrent batches lock their rows in one order (no deadlock).
            rows.sort(key=_event_id)
            if self._streamed(events.copy, tenant_id, iter(rows), []):
                return 0
        return self._merge(events, tenant_id, rows, owner)

    def _streamed(
        self, copy_sql: str, tenant_id: str, stream: Iterator[Row], seen: list[Row]
    ) -> bool | None:
        """COPY rows as they come while their ids ascend; keep each in ``seen``.

        True when the batch was new (and is stored, at COPY's speed); False when an id (or a
        charge id) was taken, ``seen`` then holding the whole batch; None when an id came out
        of order, ``seen`` holding the rows read so far. The savepoint undoes a partial COPY
        and leaves the transaction usable. Any other error (a later event of the body broken)
        abandons the COPY and propagates.
        """
        self._conn.execute("SAVEPOINT ecp_evidence_batch")
        try:
            with self._conn.cursor() as cursor, cursor.copy(copy_sql) as copy:
                last = ""
                for row in stream:
                    seen.append(row)
                    last = _after(last, row[0])
                    copy.write_row((tenant_id, *row))
        except psycopg.errors.UniqueViolation:
            roll_back_to(self._conn, "ecp_evidence_batch")
            return False
        except _Unordered:
            roll_back_to(self._conn, "ecp_evidence_batch")
            return None
        self._conn.execute("RELEASE SAVEPOINT ecp_evidence_batch")
        return True

    def _merge(
        self,
        events: EventTable[Any],
        tenant_id: str,
        rows: list[Row],
        owner: Callable[[Row], str | None] | None,
    ) -> int:
        """Stage the sorted batch and merge it (see the module's docstring)."""
        self._conn.execute(events.stage)
        with self._conn.cursor() as cursor:
            with cursor.copy(events.copy_staged) as copy:
                for ordinal, row in enumerate(rows):
                    copy.write_row((ordinal, tenant_id, *row))
            inserted = cursor.execute(events.merge).rowcount
            found = cursor.execute(events.differing).fetchone()
        if found is None:
            return len(rows) - inserted
        if found["stored"] is None and owner is not None:
            charge = owner(rows[found["ordinal"]])
            if charge is not None:
                raise charge_taken(charge, self._owner(tenant_id, charge))
        raise changed_replay(found["event_id"])

    def _owner(self, tenant_id: str, charge_id: str) -> str | None:
        row = self._conn.execute(
            "SELECT event_id FROM ecp_evidence_executions WHERE tenant_id = %s AND charge_id = %s",
            (tenant_id, charge_id),
        ).fetchone()
        return None if row is None else str(row["event_id"])


def _after(last: str, event_id: str) -> str:
    """``event_id``, when it does not come before ``last``; else _Unordered."""
    if event_id < last:
        raise _Unordered
    return event_id


_CHARGE = ExecutionRow._fields.index("charge_id")


def _charge_of(row: Row) -> str | None:
    charge: str | None = row[_CHARGE]
    return charge
