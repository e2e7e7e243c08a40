"""Reconciliation on PostgreSQL: imported statements, and the provider's priced evidence.

:data:`PROVIDER_EVENTS` is the SQL twin of :func:`ecp_core.reconciliation.matching.provider_events`
(the provider's charges in the window, each priced by its latest revision and carrying its
run's outcome status, judged by :data:`ecp_postgres.debugger.JUDGE`); the differential test
``test_postgres_provider_events_equal_the_reference`` (the reconciliation suite,
``ecp_core.testing.conformance.reconciliation``, run by the contract tests) holds it equal to the
memory adapter, which calls the core's function itself.
"""

from typing import Any

from psycopg.types.json import Jsonb

from ecp_core.debugger.tally import OutcomeStatus
from ecp_core.errors import exists
from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow
from ecp_core.reconciliation.model import (
    SCOPE_KEYS,
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
    StoredStatement,
)
from ecp_core.types import CostMeasurement
from ecp_postgres.debugger import FAILURE, JUDGE, UNRESOLVED
from ecp_postgres.evidence import EvidenceRows
from ecp_postgres.rows import Repository

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
    """The outcome status of a verdict code (:data:`ecp_postgres.debugger.JUDGE`); None: unresolved."""
    if verdict is None or verdict >= UNRESOLVED:
        return OutcomeStatus.UNRESOLVED
    return OutcomeStatus.SUCCESS if verdict < FAILURE else OutcomeStatus.FAILURE


class PostgresReconciliation(Repository):
    """ReconciliationRepository on PostgreSQL: statements in ``provider_bills`` and their buckets in ``provider_cost_buckets``."""

    def statement(self, tenant_id: str, provider: str, statement_id: str) -> StoredStatement | None:
        """One stored statement, or None."""
        key = (tenant_id, provider, statement_id)
        head = self._conn.execute(
            "SELECT * FROM provider_bills WHERE tenant_id = %s AND provider = %s"
            " AND statement_id = %s",
            key,
        ).fetchone()
        if head is None:
            return None
        rows = self._conn.execute(
            "SELECT * FROM provider_cost_buckets WHERE tenant_id = %s AND provider = %s"
            " AND statement_id = %s ORDER BY bucket_id",
            key,
        ).fetchall()
        buckets = tuple(
            ProviderBucket(
                bucket_id=row["bucket_id"],
                period_start=row["period_start"],
                period_end=row["period_end"],
                amount_usd=row["amount_usd"],
                model=row["model"],
                provider_dimensions=row["provider_dimensions"],
            )
            for row in rows
        )
        statement = ProviderStatement(
            statement_id=head["statement_id"],
            provider=head["provider"],
            period_start=head["period_start"],
            period_end=head["period_end"],
            currency=Currency(head["currency"]),
            billed_total_usd=head["billed_total_usd"],
            source_kind=SourceKind(head["source_kind"]),
            buckets=buckets,
        )
        return StoredStatement(
            tenant_id=tenant_id,
            statement=statement,
            digest=head["digest"],
            imported_at=head["imported_at"],
            imported_by=head["imported_by"],
        )

    def add_statement(self, stored: StoredStatement) -> None:
        """Store a new statement and its buckets; Conflict when its identity is taken."""
        statement = stored.statement
        key = (stored.tenant_id, statement.provider, statement.statement_id)
        cursor = self._conn.execute(
            "INSERT INTO provider_bills (tenant_id, provider, statement_id, period_start,"
            " period_end, currency, billed_total_usd, source_kind, digest, imported_at,"
            " imported_by) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (
                *key,
                statement.period_start,
                statement.period_end,
                statement.currency.value,
                statement.billed_total_usd,
                statement.source_kind.value,
                stored.digest,
                stored.imported_at,
                stored.imported_by,
            ),
        )
        if cursor.rowcount != 1:
            raise exists("statement", f"{statement.statement_id} of {statement.provider}")
        rows: list[tuple[Any, ...]] = [
            (
                *key,
                bucket.bucket_id,
                bucket.period_start,
                bucket.period_end,
                bucket.amount_usd,
                bucket.model,
                Jsonb(bucket.provider_dimensions),
            )
            for bucket in statement.buckets
        ]
        with self._conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO provider_cost_buckets (tenant_id, provider, statement_id, bucket_id,"
                " period_start, period_end, amount_usd, model, provider_dimensions)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )


class PostgresProviderEvents(EvidenceRows):
    """ProviderEvents on PostgreSQL: :data:`PROVIDER_EVENTS` (see the module docstring)."""

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """The provider's priced charges in the window, each with its run's outcome status."""
        with self.whole_window():
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
