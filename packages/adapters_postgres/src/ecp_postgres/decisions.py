"""DecisionRepository and ReconciliationRepository on PostgreSQL."""

import json
from datetime import datetime
from typing import Any

from psycopg.types.json import Json, Jsonb

from ecp_core.decisions.model import (
    CompareRequest,
    DecisionArtifact,
    DecisionSchedule,
    read_artifact,
)
from ecp_core.errors import Conflict
from ecp_core.reconciliation.model import (
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
    StoredStatement,
)
from ecp_core.wire import unstructure
from ecp_postgres.repositories import _Repository
from ecp_postgres.rows import Table

LOCK_NAMESPACE = "ecp.decisions:"
"""Prefix of the advisory lock keys of comparison subjects."""
SCHEDULES = Table("ecp_decision_schedules", DecisionSchedule, json=["policy"])


class PostgresDecisions(_Repository):
    """Artifacts as exact JSON beside the columns that find them; schedules row by row."""

    def lock_subject(self, tenant_id: str, request: CompareRequest) -> None:
        """A transaction-level advisory lock on the comparison's subject."""
        subject = [
            tenant_id,
            request.workflow_id,
            request.baseline_version,
            request.candidate_version,
            request.start.isoformat(),
            request.end.isoformat(),
        ]
        self._conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (LOCK_NAMESPACE + json.dumps(subject),),
        )

    def find(
        self, tenant_id: str, request_digest: str, fingerprint: str
    ) -> DecisionArtifact | None:
        """The artifact of this request over this evidence, or None."""
        row = self._conn.execute(
            "SELECT artifact FROM ecp_decisions"
            " WHERE tenant_id = %s AND request_digest = %s AND fingerprint = %s",
            (tenant_id, request_digest, fingerprint),
        ).fetchone()
        return None if row is None else read_artifact(row["artifact"])

    def revisions(self, tenant_id: str, request: CompareRequest) -> int:
        """How many artifacts compare the same workflow, versions and window."""
        row = self._conn.execute(
            "SELECT count(*) AS n FROM ecp_decisions WHERE tenant_id = %s AND workflow_id = %s"
            " AND baseline_version = %s AND candidate_version = %s AND start_at = %s"
            " AND end_at = %s",
            (
                tenant_id,
                request.workflow_id,
                request.baseline_version,
                request.candidate_version,
                request.start,
                request.end,
            ),
        ).fetchone()
        return int(row["n"]) if row is not None else 0

    def add(self, artifact: DecisionArtifact, fingerprint: str) -> None:
        """Retain a new artifact; Conflict when the same request and evidence are retained."""
        cursor = self._conn.execute(
            "INSERT INTO ecp_decisions (tenant_id, decision_id, workflow_id, baseline_version,"
            " candidate_version, start_at, end_at, request_digest, fingerprint, created_at,"
            " artifact) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (
                artifact.tenant_id,
                artifact.decision_id,
                artifact.workflow_id,
                artifact.baseline_version,
                artifact.candidate_version,
                artifact.start,
                artifact.end,
                artifact.request_digest,
                fingerprint,
                artifact.created_at,
                Json(unstructure(artifact)),
            ),
        )
        if cursor.rowcount != 1:
            raise Conflict("this comparison over this evidence is already retained")

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: tuple[datetime, str] | None = None,
        workflow_id: str | None = None,
    ) -> list[DecisionArtifact]:
        """Artifacts newest first by (created_at, decision_id)."""
        where, params = ["tenant_id = %s"], [tenant_id]
        if workflow_id is not None:
            where.append("workflow_id = %s")
            params.append(workflow_id)
        if before is not None:
            where.append("(created_at, decision_id) < (%s, %s)")
            params += [before[0], before[1]]
        rows = self._conn.execute(
            f"SELECT artifact FROM ecp_decisions WHERE {' AND '.join(where)}"  # noqa: S608 - constants
            " ORDER BY created_at DESC, decision_id DESC LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [read_artifact(row["artifact"]) for row in rows]

    def add_schedule(self, schedule: DecisionSchedule) -> None:
        """Store a new schedule."""
        self._insert(SCHEDULES, schedule, f"schedule {schedule.schedule_id} exists")

    def schedules(self, tenant_id: str) -> list[DecisionSchedule]:
        """The tenant's schedules by (created_at, schedule_id)."""
        return self._all(
            SCHEDULES, "WHERE tenant_id = %s ORDER BY created_at, schedule_id", (tenant_id,)
        )

    def due(self, now: datetime, *, limit: int) -> list[DecisionSchedule]:
        """Schedules due at ``now``, oldest occurrence first."""
        return self._all(
            SCHEDULES,
            "WHERE next_run_at <= %s ORDER BY next_run_at, schedule_id LIMIT %s",
            (now, limit),
        )

    def claim(self, schedule_id: str, expected: datetime, following: datetime) -> bool:
        """The conditional update: only the claimant that read ``expected`` moves it."""
        cursor = self._conn.execute(
            "UPDATE ecp_decision_schedules SET next_run_at = %s"
            " WHERE schedule_id = %s AND next_run_at = %s",
            (following, schedule_id, expected),
        )
        return cursor.rowcount == 1

    def record_run(
        self, schedule_id: str, at: datetime, decision_id: str | None, error: str | None
    ) -> None:
        """Note an occurrence's result on the schedule."""
        self._conn.execute(
            "UPDATE ecp_decision_schedules SET last_run_at = %s, last_decision_id = %s,"
            " last_error = %s WHERE schedule_id = %s",
            (at, decision_id, error, schedule_id),
        )


class PostgresReconciliation(_Repository):
    """Statements in ``provider_bills`` and their buckets in ``provider_cost_buckets``."""

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
            raise Conflict(f"statement {statement.statement_id} of {statement.provider} exists")
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
