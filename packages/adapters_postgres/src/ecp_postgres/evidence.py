"""EvidenceRepository on PostgreSQL: bulk idempotent ingestion and the tally in one statement.

Ingestion first COPYs a batch straight into its table (inside a savepoint): a batch of new
events, the common case, costs what COPY costs. When an id or a charge id is already taken the
COPY fails on the unique index, the savepoint undoes it, and the batch goes through one
``INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING RETURNING``; the rows it skipped are
exact replays (same id, same digest) or conflicts (another digest, or a charge id another event
owns), which one more statement tells apart.

:meth:`PostgresEvidence.tally` runs the rules of :mod:`ecp_core.debugger.tally` in SQL and
returns only grouped rows; the contract suite proves both agree.
"""

import contextlib
import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC
from typing import Any, Generic, TypeVar

import psycopg

from ecp_core.debugger.tally import (
    Granularity,
    Grouping,
    Tally,
    TallyQuery,
    normalize_scalar,
    scalar_key,
)
from ecp_core.errors import Conflict
from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    SourceInventory,
)
from ecp_core.money import ZERO
from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow
from ecp_core.wire import unstructure
from ecp_postgres.evidence_reads import EvidenceReads
from ecp_postgres.judging import FAILURE as _FAILURE
from ecp_postgres.judging import JUDGE as _JUDGE
from ecp_postgres.judging import UNRESOLVED as _UNRESOLVED
from ecp_postgres.repositories import _Repository
from ecp_postgres.rows import Table

T = TypeVar("T")

DEFINITIONS = Table("ecp_evidence_definitions", OutcomeDefinition, json=["predicate"])


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

# --- the tally ---------------------------------------------------------------------------------
#
# One statement. Per event (``events``): its price after revisions and its run's verdict. Sums
# and counts are GROUPING SETS over the events (``sums``). Distinct runs are what make a tally
# expensive: they are counted as (group, run) pairs, one GROUPING SETS hash aggregate that keys
# each fine set with the run (``pairs``), then counted per group (``runs``). TOTAL and VERSION
# are rolled up from the rows of one fine set (the base set) rather than aggregating every event
# twice more: their sums from its sums, their runs from its pairs. Each group comes back as two
# rows, its sums and its runs, which Python puts together; no per-event row leaves the server.

_KEYS = ("workflow_version", "window_start", "step_id", "cohort")
_SETS: dict[Grouping, tuple[str, ...]] = {
    Grouping.TOTAL: (),
    Grouping.VERSION: ("workflow_version",),
    Grouping.VERSION_WINDOW: ("workflow_version", "window_start"),
    Grouping.VERSION_STEP: ("workflow_version", "step_id"),
    Grouping.VERSION_COHORT: ("workflow_version", "cohort"),
}
_FINE = (Grouping.VERSION_WINDOW, Grouping.VERSION_STEP, Grouping.VERSION_COHORT)
_ROLLED_BITS = 16
"""``bits`` of rolled-up rows: this plus GROUPING(workflow_version) (0 VERSION, 1 TOTAL)."""

_RUN_FIGURES = {
    "runs": "count(*)",
    "successful_runs": f"count(*) FILTER (WHERE verdict < {_FAILURE})",
    "failed_runs": f"count(*) FILTER (WHERE verdict >= {_FAILURE} AND verdict < {_UNRESOLVED})",
    "unresolved_runs": f"count(*) FILTER (WHERE verdict >= {_UNRESOLVED})",
    "inferred_outcome_runs": "count(*) FILTER (WHERE verdict & 2 <> 0)",
    "provisional_outcome_runs": "count(*) FILTER (WHERE verdict & 1 <> 0)",
}
_FAILED = f"verdict >= {_FAILURE} AND verdict < {_UNRESOLVED}"
_SUM_FIGURES = {
    "events": "count(*)",
    "summary_events": "count(*) FILTER (WHERE summary)",
    "unattributed_events": "count(*) FILTER (WHERE verdict IS NULL)",
    "measured_usd": "sum(cost) FILTER (WHERE NOT summary AND measurement = 'measured')",
    "estimated_usd": "sum(cost) FILTER (WHERE NOT summary AND measurement = 'estimated')",
    "unknown_cost_events": "count(*) FILTER (WHERE NOT summary AND cost IS NULL)",
    "failure_tax_usd": f"sum(cost) FILTER (WHERE NOT summary AND {_FAILED})",
    "repeated_attempt_events": "count(*) FILTER (WHERE NOT summary AND repeated)",
    "repeated_attempt_usd": "sum(cost) FILTER (WHERE NOT summary AND repeated)",
}
_MONEY = ("measured_usd", "estimated_usd", "failure_tax_usd", "repeated_attempt_usd")

# How a deciding outcome's value is judged. ``equals`` is jsonb equality, which is the
# reference's type-aware equality (true <> 1, 1 = 1.0, a number by its decimal value);
# thresholds judge only jsonb numbers, as exact numerics; anything else is unresolved.


# The workflow's definitions (parsed once: ``predicate`` is json), the deciding outcome of each
# of its runs (the latest assertion of the defined type not after as_of, ties to the greatest
# event id), and the pricing revision of each charge (likewise the latest).
_VERDICTS = """
defs AS MATERIALIZED (
    SELECT workflow_version, outcome_type,
           predicate ->> 'kind' AS kind,
           (predicate -> 'value')::jsonb AS expected,
           (predicate ->> 'threshold')::numeric AS threshold
    FROM ecp_evidence_definitions
    WHERE tenant_id = %(tenant)s AND workflow_id = %(workflow)s {version_d}
),
deciding AS (
    SELECT DISTINCT ON (o.workflow_version, o.run_id)
           o.workflow_version, o.run_id,
           ({judge})::int2 AS verdict
    FROM ecp_evidence_outcomes o
    JOIN defs d ON d.workflow_version = o.workflow_version AND d.outcome_type = o.outcome_type
    WHERE o.tenant_id = %(tenant)s AND o.workflow_id = %(workflow)s
      AND o.asserted_at <= %(as_of)s {version_o}
    ORDER BY o.workflow_version, o.run_id, o.asserted_at DESC, o.event_id DESC
),
latest AS (
    SELECT DISTINCT ON (charge_id) charge_id, cost_usd, cost_measurement
    FROM ecp_evidence_revisions
    WHERE tenant_id = %(tenant)s
    ORDER BY charge_id DESC, revised_at DESC, event_id DESC
)"""

# date_bin from midnight UTC of year 1 is date_trunc(granularity, occurred_at, 'UTC') for every
# timestamp an event can carry (UTC has no offset changes; nothing precedes the origin), and
# cheaper: no time zone conversion per event.
_ORIGIN = "TIMESTAMPTZ '0001-01-01 00:00:00+00'"

_TALLY = """
WITH {verdicts},
events AS MATERIALIZED (
    SELECT e.workflow_version,
           -- a run is a (version, run id) pair: the key is injective (length-prefixed)
           length(e.workflow_version) || ':' || e.workflow_version || e.run_id AS run_id,
           e.step_id,
           date_bin(INTERVAL '1 {granularity}', e.occurred_at, {origin}) AS window_start,
           {cohort} AS cohort,
           e.cost_role = 'summary' AS summary,
           e.attempt > 1 AS repeated,
           -- the price: the latest revision's, else the event's own
           CASE WHEN r.charge_id IS NULL THEN e.cost_usd ELSE r.cost_usd END AS cost,
           CASE WHEN r.charge_id IS NULL THEN e.cost_measurement ELSE r.cost_measurement END
               AS measurement,
           -- the run's verdict: unresolved without a deciding outcome, NULL without a run
           CASE WHEN e.run_id IS NOT NULL THEN coalesce(v.verdict, {unresolved}::int2) END
               AS verdict
    FROM ecp_evidence_executions e
    LEFT JOIN latest r ON r.charge_id = e.charge_id
    LEFT JOIN deciding v ON v.workflow_version = e.workflow_version AND v.run_id = e.run_id
    WHERE e.tenant_id = %(tenant)s AND e.workflow_id = %(workflow)s
      AND e.occurred_at >= %(start)s AND e.occurred_at < %(end)s {version_e}
),
sums AS (
    SELECT GROUPING({used}) AS bits, {keys},
           {sums}
    FROM events
    GROUP BY GROUPING SETS ({sets})
),
pairs AS (
    SELECT GROUPING({used}) AS bits, {keys}, run_id, min(verdict) AS verdict
    FROM events
    WHERE run_id IS NOT NULL
    GROUP BY GROUPING SETS ({pair_sets})
){rolled}
SELECT 's' AS part, * FROM sums{rolled_sums}
UNION ALL
SELECT 'r', bits, {key_list}, {runs}, {nulls}
FROM ({all_pairs}) AS counted
GROUP BY bits, {key_list}
"""

# TOTAL and VERSION from the base set's rows: their sums add up; their runs are the base
# set's pairs regrouped by (version, run) and by run.
_ROLLED = """,
rolled_pairs AS (
    SELECT {rolled_bits} + {version_bit} AS bits, {version} AS workflow_version,
           NULL::timestamptz AS window_start, NULL::text AS step_id,
           NULL::{cohort_type} AS cohort, run_id, min(verdict) AS verdict
    FROM pairs
    WHERE bits = {base}
    GROUP BY GROUPING SETS ({pair_sets})
)"""
_ROLLED_SUMS = """
UNION ALL
SELECT 's', {rolled_bits} + {version_bit}, {version},
       NULL::timestamptz, NULL::text, NULL::{cohort_type},
       {sums}
FROM sums
WHERE bits = {base}
GROUP BY GROUPING SETS ({sets})
HAVING sum(events) > 0"""


def _tally_sql(query: TallyQuery) -> tuple[str, dict[int, Grouping]]:
    """The statement for the query's shape, and each ``bits`` value's grouping.

    GROUPING() takes the key columns the fine sets use; a bit is set for each one a set leaves
    out. Keys no set uses are NULL. A query with no fine grouping aggregates by version (the
    base set; its rows are returned only when asked for).
    """
    requested = set(query.groupings)
    fine = [grouping for grouping in _FINE if grouping in requested] or [Grouping.VERSION]
    rolled = [g for g in (Grouping.VERSION, Grouping.TOTAL) if g in requested and g not in fine]
    used = [key for key in _KEYS if any(key in _SETS[grouping] for grouping in fine)]
    bits = {
        sum(
            1 << (len(used) - 1 - i) for i, key in enumerate(used) if key not in _SETS[grouping]
        ): grouping
        for grouping in fine
    }
    base = next(iter(bits))
    cohort_type = "text" if query.dimension is None else "jsonb"
    types = {"window_start": "timestamptz", "step_id": "text", "cohort": cohort_type}
    version = "AND {}workflow_version = %(version)s" if query.workflow_version is not None else ""
    rolled_sql = rolled_sums = ""
    all_pairs = "SELECT * FROM pairs"
    if rolled:
        bits.update({_ROLLED_BITS + int(g is Grouping.TOTAL): g for g in rolled})
        shape = {
            "rolled_bits": _ROLLED_BITS,
            "version_bit": "GROUPING(workflow_version)" if Grouping.VERSION in rolled else "1",
            "version": "workflow_version" if Grouping.VERSION in rolled else "NULL::text",
            "cohort_type": cohort_type,
            "base": base,
        }
        rolled_sql = _ROLLED.format(
            **shape,
            pair_sets=", ".join(
                "(" + ", ".join((*_SETS[grouping], "run_id")) + ")" for grouping in rolled
            ),
        )
        rolled_sums = _ROLLED_SUMS.format(
            **shape,
            sums=",\n       ".join(f"sum({name})" for name in _SUM_FIGURES),
            sets=", ".join("(" + ", ".join(_SETS[grouping]) + ")" for grouping in rolled),
        )
        all_pairs += " UNION ALL SELECT * FROM rolled_pairs"
    sql = _TALLY.format(
        verdicts=_VERDICTS.format(
            version_d=version.format(""), version_o=version.format("o."), judge=_JUDGE
        ),
        unresolved=_UNRESOLVED,
        version_e=version.format("e."),
        granularity=Granularity(query.granularity).value,
        origin=_ORIGIN,
        cohort="e.subject_id" if query.dimension is None else "e.dimensions -> %(dimension)s::text",
        used=", ".join(used),
        keys=", ".join(key if key in used else f"NULL::{types[key]} AS {key}" for key in _KEYS),
        key_list=", ".join(_KEYS),
        sums=",\n           ".join(f"{sql} AS {name}" for name, sql in _SUM_FIGURES.items()),
        sets=", ".join("(" + ", ".join(_SETS[grouping]) + ")" for grouping in fine),
        pair_sets=", ".join(
            "(" + ", ".join((*_SETS[grouping], "run_id")) + ")" for grouping in fine
        ),
        rolled=rolled_sql,
        rolled_sums=rolled_sums,
        all_pairs=all_pairs,
        runs=", ".join(_RUN_FIGURES.values()),
        nulls=", ".join(["NULL"] * (len(_SUM_FIGURES) - len(_RUN_FIGURES))),
    )
    return sql, bits


def _cohort(value: Any) -> Any:  # noqa: ANN401 - a JSON scalar read back from jsonb
    """The cohort as the reference spells it (:func:`normalize_scalar`).

    jsonb keeps a number as the decimal it was written as, which is what the reference's
    normalisation yields for integral floats too.
    """
    return normalize_scalar(value)


_FIGURE_COLUMNS = tuple(_SUM_FIGURES)
"""The result's figure columns: a sums row fills them all, a runs row the first six."""


def _tallies(
    rows: list[dict[str, Any]], bits: dict[int, Grouping], wanted: frozenset[Grouping]
) -> list[Tally]:
    """Put each group's sums row and runs row together (a group without runs has none)."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        grouping = bits[row["bits"]]
        if grouping not in wanted:
            continue
        keys = _SETS[grouping]
        cohort = _cohort(row["cohort"]) if "cohort" in keys else None
        key = {
            "grouping": grouping,
            "workflow_version": row["workflow_version"] if "workflow_version" in keys else None,
            "window_start": row["window_start"].astimezone(UTC) if "window_start" in keys else None,
            "step_id": row["step_id"] if "step_id" in keys else None,
        }
        group = groups.setdefault((*key.values(), scalar_key(cohort)), {**key, "cohort": cohort})
        names = _SUM_FIGURES if row["part"] == "s" else _RUN_FIGURES
        for name, column in zip(names, _FIGURE_COLUMNS, strict=False):
            group[name] = row[column]
    counts = [name for name in (*_SUM_FIGURES, *_RUN_FIGURES) if name not in _MONEY]
    tallies = []
    for group in groups.values():
        fields: dict[str, Any] = {name: group[name] for name in ("grouping", *_KEYS)}
        fields.update({name: int(group.get(name) or 0) for name in counts})
        fields.update({name: group.get(name) or ZERO for name in _MONEY})
        tallies.append(Tally(**fields))
    return tallies


_WORK_MEM = "16MB"


class PostgresEvidence(EvidenceReads, _Repository):
    """EvidenceRepository on PostgreSQL; see the module's docstring.

    Row-level reads for reconciliation and decisions (``provider_events``, ``select``) come
    from :class:`~ecp_postgres.evidence_reads.EvidenceReads`.
    """

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
                raise Conflict(f"charge {charge} belongs to event {self._owner(tenant_id, charge)}")
        raise Conflict(f"event {event_id} was stored with other content")

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

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        return self._one(  # type: ignore[no-any-return]
            DEFINITIONS,
            "tenant_id = %s AND workflow_id = %s AND workflow_version = %s",
            (tenant_id, workflow_id, workflow_version),
        )

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition; Conflict when the version has one."""
        self._insert(
            DEFINITIONS,
            definition,
            f"workflow version {definition.workflow_version} has a definition",
        )

    def count_executions(self, tenant_id: str, query: TallyQuery, *, limit: int) -> int:
        """Execution events in the window, counting no further than ``limit``."""
        version = "" if query.workflow_version is None else " AND workflow_version = %(version)s"
        row = self._conn.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM ecp_evidence_executions"  # noqa: S608
            " WHERE tenant_id = %(tenant)s AND workflow_id = %(workflow)s"
            f" AND occurred_at >= %(start)s AND occurred_at < %(end)s{version}"
            " LIMIT %(limit)s) AS window_events",
            {
                "tenant": tenant_id,
                "workflow": query.workflow_id,
                "version": query.workflow_version,
                "start": query.start,
                "end": query.end,
                "limit": max(limit, 0),
            },
        ).fetchone()
        assert row is not None  # noqa: S101 - count(*) always answers
        return int(row["n"])

    @contextlib.contextmanager
    def _whole_window(self) -> Iterator[None]:
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
            (_WORK_MEM,),
        ).fetchone()
        assert previous is not None  # noqa: S101 - a SELECT without FROM answers
        yield
        self._conn.execute(
            "SELECT set_config('enable_nestloop', %s, true), set_config('work_mem', %s, true)",
            (previous["nestloop"], previous["work_mem"]),
        )

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """Aggregate the window as :func:`ecp_core.debugger.tally.tally` defines, in SQL."""
        if not query.groupings:
            return []
        sql, bits = _tally_sql(query)
        with self._whole_window():
            rows = self._conn.execute(
                sql,
                {
                    "tenant": tenant_id,
                    "workflow": query.workflow_id,
                    "version": query.workflow_version,
                    "start": query.start,
                    "end": query.end,
                    "as_of": query.as_of,
                    "dimension": query.dimension,
                },
            ).fetchall()
        return _tallies(rows, bits, query.groupings)

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """:meth:`EvidenceReads.provider_events` with the whole-window settings (its joins)."""
        with self._whole_window():
            return super().provider_events(tenant_id, window, limit=limit)

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


__all__ = ["PostgresEvidence"]
