"""Row-level evidence reads for reconciliation and decisions (mixed into PostgresEvidence).

``provider_events`` selects a provider's priced charges in SQL (latest revision, deciding
outcome judged in SQL, only the columns matching needs); ``select`` reads one version's
evidence with digests. Both return what the core's reference functions define.
"""

from typing import Any

import psycopg

from ecp_core.decisions.selection import Selection, VersionWindow
from ecp_core.evidence.model import (
    MAX_SAFE_INTEGER,
    ChargeRevision,
    CostMeasurement,
    CostRole,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    SourceInventory,
)
from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow
from ecp_core.reconciliation.model import SCOPE_KEYS, OutcomeStatus
from ecp_core.wire import structure
from ecp_postgres.judging import FAILURE, JUDGE, UNRESOLVED

_SCOPE_COLUMNS = tuple(sorted(SCOPE_KEYS))


def _text_of(key: str) -> str:
    """A metadata key's value when it is a string, else NULL (as the reference reads it)."""
    return (
        f"CASE WHEN jsonb_typeof(ev.metadata -> '{key}') = 'string'"
        f" THEN ev.metadata ->> '{key}' END AS {key}"
    )


PROVIDER_EVENTS = f"""
WITH ev AS (
    SELECT e.workflow_id, e.workflow_version, e.run_id, e.occurred_at, e.metadata,
           e.charge_id, e.cost_usd, e.cost_measurement
    FROM ecp_evidence_executions e
    WHERE e.tenant_id = %(tenant)s AND e.cost_role = 'charge'
      AND e.metadata ->> 'provider' = %(provider)s
      AND jsonb_typeof(e.metadata -> 'provider') = 'string'
      AND e.occurred_at >= %(start)s AND e.occurred_at < %(end)s
    LIMIT %(limit)s
), rev AS (
    SELECT DISTINCT ON (r.charge_id) r.charge_id, r.cost_usd, r.cost_measurement
    FROM ecp_evidence_revisions r
    WHERE r.tenant_id = %(tenant)s AND r.charge_id IN (SELECT charge_id FROM ev)
    ORDER BY r.charge_id, r.revised_at DESC, r.event_id DESC
), d AS (
    SELECT workflow_id, workflow_version, outcome_type,
           predicate ->> 'kind' AS kind,
           (predicate -> 'value')::jsonb AS expected,
           (predicate ->> 'threshold')::numeric AS threshold
    FROM ecp_evidence_definitions
    WHERE tenant_id = %(tenant)s AND workflow_id IN (SELECT workflow_id FROM ev)
), dec AS (
    SELECT DISTINCT ON (o.workflow_id, o.workflow_version, o.run_id)
           o.workflow_id, o.workflow_version, o.run_id, ({JUDGE})::int2 AS verdict
    FROM ecp_evidence_outcomes o
    JOIN d ON d.workflow_id = o.workflow_id AND d.workflow_version = o.workflow_version
          AND d.outcome_type = o.outcome_type
    WHERE o.tenant_id = %(tenant)s AND o.asserted_at <= %(as_of)s
      AND (o.workflow_id, o.workflow_version, o.run_id) IN
          (SELECT workflow_id, workflow_version, run_id FROM ev WHERE run_id IS NOT NULL)
    ORDER BY o.workflow_id, o.workflow_version, o.run_id, o.asserted_at DESC, o.event_id DESC
)
SELECT ev.workflow_id, ev.workflow_version, ev.occurred_at, {_text_of("model")},
       {", ".join(_text_of(key) for key in _SCOPE_COLUMNS)},
       CASE WHEN rev.charge_id IS NULL THEN ev.cost_usd ELSE rev.cost_usd END AS cost_usd,
       CASE WHEN rev.charge_id IS NULL THEN ev.cost_measurement ELSE rev.cost_measurement END
           AS cost_measurement,
       dec.verdict
FROM ev
LEFT JOIN rev ON rev.charge_id = ev.charge_id
LEFT JOIN dec ON dec.workflow_id = ev.workflow_id AND dec.workflow_version = ev.workflow_version
             AND dec.run_id = ev.run_id
"""  # noqa: S608 - built from constants only
_MEASUREMENTS = {m.value: m for m in CostMeasurement}


def _status(verdict: int | None) -> OutcomeStatus:
    """The outcome status of a verdict code (:mod:`ecp_postgres.judging`); None: unresolved."""
    if verdict is None or verdict >= UNRESOLVED:
        return OutcomeStatus.UNRESOLVED
    return OutcomeStatus.SUCCESS if verdict < FAILURE else OutcomeStatus.FAILURE


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


class EvidenceReads:
    """Reads of whole evidence rows; needs ``_conn`` and ``definition`` of its host class."""

    _conn: psycopg.Connection[dict[str, Any]]

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """Provided by the host repository."""
        raise NotImplementedError

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """The provider's priced charges in the window, each with its run's outcome status."""
        rows = self._conn.execute(
            PROVIDER_EVENTS,
            {
                "tenant": tenant_id,
                "provider": window.provider,
                "start": window.start,
                "end": window.end,
                "as_of": window.as_of,
                "limit": limit,
            },
        ).fetchall()
        scopes: dict[tuple[str | None, ...], dict[str, str]] = {}
        result = []
        for row in rows:
            values = tuple(row[key] for key in _SCOPE_COLUMNS)
            scope = scopes.get(values)
            if scope is None:  # few distinct scopes: one shared (never mutated) dict each
                scope = scopes[values] = {
                    key: value
                    for key, value in zip(_SCOPE_COLUMNS, values, strict=True)
                    if value is not None
                }
            result.append(
                PricedEvent(
                    workflow_id=row["workflow_id"],
                    workflow_version=row["workflow_version"],
                    occurred_at=row["occurred_at"],
                    model=row["model"],
                    scope=scope,
                    cost_usd=row["cost_usd"],
                    cost_measurement=_MEASUREMENTS[row["cost_measurement"]],
                    outcome_status=_status(row["verdict"]),
                )
            )
        return result

    def select(self, tenant_id: str, window: VersionWindow, *, limit: int) -> Selection:
        """One version's events in the window, their runs' outcomes and their charges' revisions."""
        end = "<=" if window.end_inclusive else "<"
        executions = self._conn.execute(  # the one interpolation is a constant comparison
            "SELECT * FROM ecp_evidence_executions WHERE tenant_id = %s AND workflow_id = %s"  # noqa: S608
            f" AND workflow_version = %s AND occurred_at >= %s AND occurred_at {end} %s"
            " ORDER BY event_id LIMIT %s",
            (
                tenant_id,
                window.workflow_id,
                window.workflow_version,
                window.start,
                window.end,
                limit,
            ),
        ).fetchall()
        runs = sorted({row["run_id"] for row in executions if row["run_id"] is not None})
        charges = sorted({row["charge_id"] for row in executions if row["charge_id"] is not None})
        outcomes = self._conn.execute(
            "SELECT * FROM ecp_evidence_outcomes WHERE tenant_id = %s AND workflow_id = %s"
            " AND workflow_version = %s AND run_id = ANY(%s)",
            (tenant_id, window.workflow_id, window.workflow_version, runs),
        ).fetchall()
        revisions = self._conn.execute(
            "SELECT * FROM ecp_evidence_revisions WHERE tenant_id = %s AND charge_id = ANY(%s)",
            (tenant_id, charges),
        ).fetchall()
        return Selection(
            executions=tuple(Digested(execution_of(r), r["digest"]) for r in executions),
            outcomes=tuple(Digested(outcome_of(r), r["digest"]) for r in outcomes),
            revisions=tuple(Digested(revision_of(r), r["digest"]) for r in revisions),
            definition=self.definition(tenant_id, window.workflow_id, window.workflow_version),
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
