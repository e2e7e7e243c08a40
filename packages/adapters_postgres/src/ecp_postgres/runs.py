"""The run repository on PostgreSQL: runs, their headers, and the fair dispatch claim."""

from datetime import datetime

from ecp_core.errors import exists, missing
from ecp_core.runs.dispatch import CLAIM_CANDIDATE_BUDGET
from ecp_core.runs.model import Run, RunClaim
from ecp_core.types import RunStatus
from ecp_postgres.retention import not_held
from ecp_postgres.rows import Repository, Table

RUNS = Table(
    "ecp_runs",
    Run,
    jsonb=[
        "state",
        "failure_state",
        "paused",
        "pending_approval_ids",
        "approved_action",
        "output",
        "metadata",
        "artifacts",
        "error",
        "ancestor_run_ids",
    ],
)
_PAYLOADS = ("state", "output", "metadata", "artifacts", "error")
_HEADER = tuple(c for c in RUNS.columns if c not in _PAYLOADS)
"""Run columns a header read returns and a header write sets (``paused`` and ``approved_action``
are written, never read: they may hold payloads too)."""
_HEADER_READ = tuple(c for c in _HEADER if c not in ("paused", "approved_action"))

_LINEAGE_ENDED = (
    "NOT EXISTS (SELECT 1 FROM ecp_runs a WHERE a.tenant_id = ecp_runs.tenant_id"
    " AND a.run_id IN (SELECT jsonb_array_elements_text(ecp_runs.ancestor_run_ids))"
    " AND a.status NOT IN ('COMPLETED', 'FAILED', 'TERMINATED_BY_POLICY'))"
)
"""SQL: every ancestor of the run has ended (``TERMINAL``); the twin of ``MemoryRuns._lineage_ended``,
held equal by ``test_a_child_of_a_live_parent_is_never_selected_for_ttl_erasure``
(ecp_core.testing.conformance.child_runs)."""

_CLAIM = """
WITH RECURSIVE tenants AS (
    (SELECT tenant_id FROM ecp_runs WHERE status IN ('PENDING', 'RUNNING')
      ORDER BY tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.tenant_id FROM ecp_runs r
             WHERE r.status IN ('PENDING', 'RUNNING') AND r.tenant_id > t.tenant_id
             ORDER BY r.tenant_id LIMIT 1)
      FROM tenants t WHERE t.tenant_id IS NOT NULL
), active AS (
    SELECT tenant_id FROM tenants WHERE tenant_id IS NOT NULL
), candidates AS (
    SELECT c.run_id, c.rank, s.served
      FROM active t
     CROSS JOIN LATERAL (
        SELECT r.run_id, row_number() OVER (ORDER BY r.tenant_id, r.run_id) AS rank
          FROM ecp_runs r
         WHERE r.tenant_id = t.tenant_id AND r.status IN ('PENDING', 'RUNNING')
           AND (r.dispatch_not_before IS NULL OR %(now)s::timestamptz IS NULL
                OR r.dispatch_not_before <= %(now)s::timestamptz)
         ORDER BY r.tenant_id, r.run_id
         LIMIT (SELECT ceil(%(budget)s::numeric / count(*))::integer FROM active)) c
     CROSS JOIN LATERAL (
        SELECT max(x.dispatch_claim) AS served FROM ecp_runs x
         WHERE x.tenant_id = t.tenant_id AND x.dispatch_claim IS NOT NULL) s
)
UPDATE ecp_runs SET dispatch_claim = nextval('ecp_run_dispatch_claims')
 WHERE run_id = (
    SELECT r.run_id FROM candidates c JOIN ecp_runs r ON r.run_id = c.run_id
     WHERE r.status IN ('PENDING', 'RUNNING')
       AND (r.dispatch_not_before IS NULL OR %(now)s::timestamptz IS NULL
            OR r.dispatch_not_before <= %(now)s::timestamptz)
     ORDER BY c.rank, c.served NULLS FIRST, c.run_id
     LIMIT 1
       FOR UPDATE OF r SKIP LOCKED)
RETURNING run_id, tenant_id, dispatch_failures
"""
"""One claim, one statement. The tenants with runnable runs are found by a loose index scan of
``ecp_runs_runnable_by_tenant`` (one probe each); each tenant offers its first
``candidates_per_tenant`` eligible runs from the same index and its last service from one probe
of ``ecp_runs_dispatch_claims``. Candidates are locked in order, skipping locked ones, and the
claimed run is stamped from a sequence so its tenant becomes the most recently served."""


class PostgresRuns(Repository):
    """RunRepository on PostgreSQL."""

    def add(self, run: Run) -> None:
        """Store a new run (its id and idempotency key must be new)."""
        self._insert(RUNS, run, exists("run", run.run_id))

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s", (run_id, tenant_id))

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run, row-locked until the transaction ends."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s FOR UPDATE", (run_id, tenant_id))

    def save(self, run: Run) -> None:
        """Replace a stored run."""
        cursor = self._conn.execute(
            RUNS.update_sql("run_id") + " AND tenant_id = %(tenant_id)s", RUNS.params(run)
        )
        if cursor.rowcount != 1:
            raise missing("run", run.run_id)

    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this key, or None."""
        return self._one(
            RUNS,
            "tenant_id = %s AND deployment_ref = %s AND idempotency_key = %s",
            (tenant_id, deployment_ref, key),
        )

    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Newest first, older than ``before``."""
        if before is None:
            return self._all(
                RUNS, "WHERE tenant_id = %s ORDER BY run_id DESC LIMIT %s", (tenant_id, limit)
            )
        return self._all(
            RUNS,
            "WHERE tenant_id = %s AND run_id < %s ORDER BY run_id DESC LIMIT %s",
            (tenant_id, before, limit),
        )

    def children(
        self, tenant_id: str, parent_run_id: str, *, limit: int, after: str | None = None
    ) -> list[Run]:
        """The parent's child runs by run id, after ``after`` (index ecp_runs_children)."""
        return self._all(
            RUNS,
            "WHERE tenant_id = %s AND parent_run_id = %s AND (%s::text IS NULL OR run_id > %s)"
            " ORDER BY run_id LIMIT %s",
            (tenant_id, parent_run_id, after, after, limit),
        )

    def count(self, tenant_id: str) -> int:
        """How many runs the tenant has."""
        row = self._conn.execute(
            "SELECT count(*) AS n FROM ecp_runs WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
        return int(row["n"]) if row else 0

    def runnable(self, limit: int) -> list[Run]:
        """PENDING or RUNNING runs, oldest first."""
        active = [RunStatus.PENDING.value, RunStatus.RUNNING.value]
        return self._all(RUNS, "WHERE status = ANY(%s) ORDER BY run_id LIMIT %s", (active, limit))

    def claim_runnable(self, now: datetime | None = None) -> RunClaim | None:
        """The next run by (rank in its tenant, tenant's last service, id), locked and stamped.

        Runs other transactions hold are skipped. See :data:`_CLAIM` for how it stays cheap.
        """
        row = self._conn.execute(_CLAIM, {"now": now, "budget": CLAIM_CANDIDATE_BUDGET}).fetchone()
        if row is None:
            return None
        self._conn.execute("SAVEPOINT ecp_run_claim")
        return RunClaim(**row)

    def undo_to_claim(self) -> None:
        """Roll back to the savepoint the claim set (its row lock and stamp stay)."""
        self._conn.execute("ROLLBACK TO SAVEPOINT ecp_run_claim")

    def record_dispatch_failure(
        self, tenant_id: str, run_id: str, not_before: datetime, *, counted: bool = True
    ) -> int:
        """Count the failure (unless not ``counted``) and back off, touching only dispatch columns."""
        row = self._conn.execute(
            "UPDATE ecp_runs SET dispatch_failures = dispatch_failures + %s,"
            " dispatch_not_before = %s, dispatch_claim = nextval('ecp_run_dispatch_claims')"
            " WHERE run_id = %s AND tenant_id = %s RETURNING dispatch_failures",
            (int(counted), not_before, run_id, tenant_id),
        ).fetchone()
        if row is None:
            raise missing("run", run_id)
        return int(row["dispatch_failures"])

    def clear_dispatch_failures(self, tenant_id: str, run_id: str) -> None:
        """Reset the count and the backoff."""
        self._conn.execute(
            "UPDATE ecp_runs SET dispatch_failures = 0, dispatch_not_before = NULL"
            " WHERE run_id = %s AND tenant_id = %s",
            (run_id, tenant_id),
        )

    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        """The run, row-locked, without reading its JSON payloads."""
        row = self._conn.execute(
            f"SELECT {', '.join(_HEADER_READ)} FROM ecp_runs"  # noqa: S608 - column names are ours
            " WHERE run_id = %s AND tenant_id = %s FOR UPDATE",
            (run_id, tenant_id),
        ).fetchone()
        return None if row is None else RUNS.load(row)

    def save_header(self, run: Run) -> None:
        """Write all but the payloads that stay as stored."""
        params = RUNS.params(run)
        sets = ", ".join(f"{c} = %({c})s" for c in _HEADER if c not in ("run_id", "tenant_id"))
        cursor = self._conn.execute(
            f"UPDATE ecp_runs SET {sets}"  # noqa: S608 - column names are ours
            " WHERE run_id = %(run_id)s AND tenant_id = %(tenant_id)s",
            {c: params[c] for c in _HEADER},
        )
        if cursor.rowcount != 1:
            raise missing("run", run.run_id)

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal, not yet erased, unheld runs updated before the instant, oldest first.

        The statuses are literals, not parameters, so the partial index ecp_runs_expired applies.
        """
        return self._all(
            RUNS,
            "WHERE tenant_id = %s AND status IN ('COMPLETED', 'FAILED') AND erased_at IS NULL"
            f" AND updated_at < %s AND {not_held('ecp_runs')} AND {_LINEAGE_ENDED}"
            ' ORDER BY updated_at, run_id COLLATE "C" LIMIT %s',
            (tenant_id, updated_before, limit),
        )

    def ids_of(self, tenant_id: str) -> list[str]:
        """Every run id of the tenant, in id order (ids grow with time: oldest first)."""
        rows = self._conn.execute(
            'SELECT run_id FROM ecp_runs WHERE tenant_id = %s ORDER BY run_id COLLATE "C"',
            (tenant_id,),
        ).fetchall()
        return [row["run_id"] for row in rows]

    def tenants(self) -> list[str]:
        """Every tenant that has runs, in order."""
        rows = self._conn.execute(
            'SELECT DISTINCT tenant_id COLLATE "C" AS tenant_id FROM ecp_runs ORDER BY 1'
        ).fetchall()
        return [row["tenant_id"] for row in rows]
