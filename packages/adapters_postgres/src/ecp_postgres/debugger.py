"""The debugger's reads of evidence on PostgreSQL: the tally in one statement.

Each SQL rule here is the twin of a Python rule of the core, and a differential test holds the
two equal over generated evidence: ``test_the_postgres_tally_equals_the_reference`` (the
evidence suite, ``ecp_core.testing.conformance.evidence``, run by the contract tests) compares this
adapter with the memory one, which calls the core's rules themselves.

- :data:`JUDGE` is :func:`ecp_core.debugger.tally.judge` (a deciding value against the predicate,
  marked inferred or provisional as :class:`ecp_core.debugger.tally.OutcomeVerdict` is).
- ``deciding`` and ``latest`` in :data:`VERDICTS` are :func:`ecp_core.debugger.tally.outcome_verdicts`
  (the latest assertion not after ``as_of``, ties to the greatest event id) and
  :func:`ecp_core.debugger.tally.latest_revisions` (the latest revision prices a charge, as
  :func:`ecp_core.debugger.tally.price` applies it).
- :meth:`PostgresEvidenceTallies.tally` is :func:`ecp_core.debugger.tally.tally`, and
  :meth:`PostgresEvidenceTallies.count_executions` counts what
  :func:`ecp_core.debugger.tally.in_window` admits (``test_count_executions_stops_at_the_limit``).

Reconciliation's provider events (:mod:`ecp_postgres.reconciliation`) judge runs with the same
:data:`JUDGE`.
"""

from datetime import UTC
from typing import Any

from ecp_core.debugger.tally import (
    Granularity,
    Grouping,
    Tally,
    TallyQuery,
    normalize_scalar,
    scalar_key,
)
from ecp_core.money import ZERO
from ecp_postgres.evidence import EvidenceRows

SUCCESS, FAILURE, UNRESOLVED = 0, 4, 8
"""Verdict codes; :data:`JUDGE` adds 2 when the deciding outcome was inferred, 1 when provisional."""

JUDGE = f"""CASE
            WHEN d.kind = 'equals' THEN
                CASE WHEN o.value = d.expected THEN {SUCCESS} ELSE {FAILURE} END
            WHEN jsonb_typeof(o.value) <> 'number' OR d.threshold IS NULL THEN {UNRESOLVED}
            WHEN CASE d.kind
                WHEN 'at_least' THEN o.value::numeric >= d.threshold
                WHEN 'greater_than' THEN o.value::numeric > d.threshold
                WHEN 'at_most' THEN o.value::numeric <= d.threshold
                WHEN 'less_than' THEN o.value::numeric < d.threshold
            END THEN {SUCCESS}
            WHEN d.kind IN ('at_least', 'greater_than', 'at_most', 'less_than') THEN {FAILURE}
            ELSE {UNRESOLVED}
        END
        + CASE WHEN o.outcome_measurement = 'inferred' THEN 2 ELSE 0 END
        + CASE WHEN o.maturity = 'provisional' THEN 1 ELSE 0 END"""
"""A run's verdict in SQL: the outcome definition's predicate applied to the deciding value.

One small integer (:data:`SUCCESS`, :data:`FAILURE` or :data:`UNRESOLVED`, plus the marks).
Expects the outcome as ``o`` and the parsed definition as ``d`` (``kind``, ``expected`` jsonb,
``threshold`` numeric). ``equals`` is jsonb equality, which is the reference's type-aware
equality (true <> 1, 1 = 1.0, a number by its decimal value); thresholds judge only jsonb
numbers, as exact numerics; anything else is unresolved. Twin of
:func:`ecp_core.debugger.tally.judge`.
"""

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
    "successful_runs": f"count(*) FILTER (WHERE verdict < {FAILURE})",
    "failed_runs": f"count(*) FILTER (WHERE verdict >= {FAILURE} AND verdict < {UNRESOLVED})",
    "unresolved_runs": f"count(*) FILTER (WHERE verdict >= {UNRESOLVED})",
    "inferred_outcome_runs": "count(*) FILTER (WHERE verdict & 2 <> 0)",
    "provisional_outcome_runs": "count(*) FILTER (WHERE verdict & 1 <> 0)",
}
_FAILED = f"verdict >= {FAILURE} AND verdict < {UNRESOLVED}"
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

# The workflow's definitions (parsed once: ``predicate`` is json), the deciding outcome of each
# of its runs (the latest assertion of the defined type not after as_of, ties to the greatest
# event id), and the pricing revision of each charge (likewise the latest): the twins of
# outcome_verdicts and latest_revisions in ecp_core.debugger.tally.
VERDICTS = """
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
        verdicts=VERDICTS.format(
            version_d=version.format(""), version_o=version.format("o."), judge=JUDGE
        ),
        unresolved=UNRESOLVED,
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


class PostgresEvidenceTallies(EvidenceRows):
    """EvidenceTallies on PostgreSQL: the core's tally rules in SQL (see the module docstring)."""

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

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """Aggregate the window as :func:`ecp_core.debugger.tally.tally` defines, in SQL."""
        if not query.groupings:
            return []
        sql, bits = _tally_sql(query)
        with self.whole_window():
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
