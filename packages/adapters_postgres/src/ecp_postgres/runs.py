"""The run repository on PostgreSQL: runs, their headers, and the fair dispatch claim."""

from datetime import datetime
from typing import Any

from ecp_core.audit.record import ChainHead
from ecp_core.errors import exists, missing
from ecp_core.runs.dispatch import CLAIM_CANDIDATE_BUDGET
from ecp_core.runs.model import Run, RunClaim
from ecp_core.types import RunStatus
from ecp_postgres.audit import SETTINGS, head_key, settings_key
from ecp_postgres.policies import POLICIES, policy_key
from ecp_postgres.retention import not_held
from ecp_postgres.rows import Repository, Table
from ecp_postgres.session import PendingWrite, session_of
from ecp_postgres.webhooks import LIVE_SUBSCRIPTION, PostgresWebhooks, subscribed_key

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

_CLAIM = (
    "SELECT run_id, tenant_id, dispatch_failures"
    " FROM ecp_claim_runnable(%(now)s::timestamptz, %(budget)s::integer)"
)
"""One claim, one statement: the function ``ecp_claim_runnable`` (migration ``core_0007``), so
that its statement is planned once per session instead of at every claim (ADR 0065). The
tenants with runnable runs are found by a loose index scan of ``ecp_runs_runnable_by_tenant``
(one probe each); each tenant offers its first ``candidates_per_tenant`` eligible runs from the
same index and its last service from one probe of ``ecp_runs_dispatch_claims``. Candidates are
locked in order, skipping locked ones, and the claimed run is stamped from a sequence so its
tenant becomes the most recently served."""


def _prefixed(prefix: str, table: Table[Any], alias: str) -> str:
    return ", ".join(f"{alias}.{c} AS {prefix}{c}" for c in table.columns)


_LOCK = f"""
SELECT {", ".join(f"r.{c}" for c in RUNS.columns)},
       h.attempt AS head__attempt, h.record_digest AS head__record_digest,
       s.tenant_id AS settings__present, {_prefixed("settings__", SETTINGS, "s")},
       p.tenant_id AS policy__present, {_prefixed("policy__", POLICIES, "p")},
       EXISTS (SELECT 1 FROM ecp_webhook_subscriptions w
                WHERE w.tenant_id = r.tenant_id AND w.deployment_ref = r.deployment_ref
                  AND w.{LIVE_SUBSCRIPTION}) AS subscribed
  FROM ecp_runs r
  LEFT JOIN ecp_audit_heads h ON h.run_id = r.run_id
  LEFT JOIN ecp_audit_settings s ON s.tenant_id = r.tenant_id
  LEFT JOIN ecp_policies p ON p.tenant_id = r.tenant_id AND p.deployment_ref = r.deployment_ref
 WHERE r.run_id = %s AND r.tenant_id = %s
   FOR UPDATE OF r
"""  # noqa: S608 - column names are ours
"""The run, row-locked, with what its attempts read next: its chain head (when it agrees with
the run's count of attempts), the tenant's audit settings, the deployment's policy and whether the deployment has webhook subscriptions (read
next, when it has). One
statement instead of four or more per attempt (ADR 0059)."""


def _part(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {key[len(prefix) :]: value for key, value in row.items() if key.startswith(prefix)}


class PostgresRuns(Repository):
    """RunRepository on PostgreSQL."""

    def add(self, run: Run) -> None:
        """Store a new run (its id and idempotency key must be new)."""
        self._insert(RUNS, run, exists("run", run.run_id))

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s", (run_id, tenant_id))

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run, row-locked until the transaction ends.

        The same statement reads what the run's next attempts need and the transaction
        remembers it (see :data:`_LOCK`).
        """
        row = self._conn.execute(_LOCK, (run_id, tenant_id)).fetchone()
        if row is None:
            return None
        memo = self._memo()
        head = _part(row, "head__")
        # A lock that waited saw the run's newest row but the head as of the statement's start:
        # it is remembered only when it agrees with the run's count of attempts.
        if (head["attempt"] or 0) == row["attempts"]:
            memo[head_key(run_id)] = (
                None if head["attempt"] is None else ChainHead(run_id=run_id, **head)
            )
        settings = _part(row, "settings__")
        memo[settings_key(tenant_id)] = (
            None if settings.pop("present") is None else SETTINGS.load(settings)
        )
        policy = _part(row, "policy__")
        deployment_ref = row["deployment_ref"]
        memo[policy_key(tenant_id, deployment_ref)] = (
            None if policy.pop("present") is None else POLICIES.load(policy)
        )
        if not row["subscribed"]:
            memo[subscribed_key(tenant_id, deployment_ref)] = []
        else:  # read now, before the attempt's writes, so that they still leave together
            PostgresWebhooks(self._conn).live_for(tenant_id, deployment_ref)
        return RUNS.load(row)

    def save(self, run: Run) -> None:
        """Replace a stored run.

        The write waits for the transaction's next statement or commit; a later save of the run
        in the same transaction replaces it.
        """
        self._write(
            PendingWrite(
                RUNS.update_sql("run_id") + " AND tenant_id = %(tenant_id)s",
                RUNS.params(run),
                expected=1,
                error=lambda: missing("run", run.run_id),
            ),
            ("run", run.run_id),
        )

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
        """Roll back to the savepoint the claim set (its row lock and stamp stay).

        Writes still waiting in the batch came after the claim: they are dropped unsent.
        """
        session = session_of(self._conn)
        if session is not None:
            session.pending.discard()
            session.memo.clear()
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
