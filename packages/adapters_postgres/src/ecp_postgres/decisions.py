"""Version decisions on PostgreSQL: artifacts, schedules, and one version's evidence.

:meth:`PostgresVersionEvidence.select` reads what :func:`ecp_core.decisions.selection.select`
selects (one version's executions in the window, their runs' outcomes, their charges'
revisions, with digests); the differential test
``test_the_postgres_selection_and_artifact_equal_the_reference`` (the decisions suite,
``ecp_core.testing.conformance.decisions``, run by the contract tests) holds it equal to the memory
adapter, which calls the core's function itself.
"""

import json
from datetime import datetime
from typing import Any

from psycopg.types.json import Json

from ecp_core.decisions.model import (
    ALREADY_RETAINED,
    CompareRequest,
    DecisionArtifact,
    DecisionSchedule,
    read_artifact,
)
from ecp_core.decisions.selection import Selection, VersionWindow
from ecp_core.errors import Conflict, exists
from ecp_core.evidence.model import Digested
from ecp_core.wire import unstructure
from ecp_postgres.evidence import EvidenceRows, execution_of, outcome_of, revision_of
from ecp_postgres.rows import Repository, Table

LOCK_NAMESPACE = "ecp.decisions:"
"""Prefix of the advisory lock keys of comparison subjects."""
SCHEDULES = Table("ecp_decision_schedules", DecisionSchedule, json=["policy"])


class PostgresDecisions(Repository):
    """DecisionRepository on PostgreSQL: artifacts as exact JSON beside the columns that find them; schedules row by row."""

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
            raise Conflict(ALREADY_RETAINED)

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: tuple[datetime, str] | None = None,
        workflow_id: str | None = None,
    ) -> list[DecisionArtifact]:
        """Artifacts newest first by (created_at, decision_id)."""
        where = ["tenant_id = %s"]
        params: list[Any] = [tenant_id]
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
        self._insert(SCHEDULES, schedule, exists("schedule", schedule.schedule_id))

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

    def claim_occurrence(self, schedule_id: str, expected: datetime, following: datetime) -> bool:
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


class PostgresVersionEvidence(EvidenceRows):
    """VersionEvidence on PostgreSQL: whole rows of one version's evidence, with digests."""

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
