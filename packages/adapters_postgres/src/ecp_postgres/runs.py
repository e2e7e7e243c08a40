"""The run repository on PostgreSQL: runs, their headers, and the fair dispatch claim."""

from datetime import datetime
from typing import Any

from ecp_core.audit.record import ChainHead
from ecp_core.errors import exists, missing
from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.engine.dispatch import CLAIM_CANDIDATE_BUDGET
from ecp_core.runs.run.model import Run, RunClaim
from ecp_core.runs.run.search import RunFilter
from ecp_core.types import RunStatus
from ecp_postgres.approvals import APPROVALS, PostgresApprovals
from ecp_postgres.audit import head_key
from ecp_postgres.retention import not_held
from ecp_postgres.rows import Repository, Table
from ecp_postgres.run_context import (
    context_columns,
    context_joins,
    known,
    part,
    prefixed,
    remember,
)
from ecp_postgres.run_search import search_clauses
from ecp_postgres.session import PendingWrite, roll_back_to, session_of
from ecp_postgres.webhooks import PostgresWebhooks

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
        "paused_by",
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
    " AND a.status NOT IN ('COMPLETED', 'FAILED', 'TERMINATED_BY_POLICY', 'CANCELED'))"
)
"""SQL: every ancestor of the run has ended (``TERMINAL``); the twin of ``MemoryRuns._lineage_ended``,
held equal by ``test_a_child_of_a_live_parent_is_never_selected_for_ttl_erasure``
(ecp_core.testing.conformance.child_runs)."""

_CLAIM = (
    "SELECT run_id, tenant_id, dispatch_failures, admitting"
    " FROM ecp_claim_runnable(%(now)s::timestamptz, %(budget)s::integer)"
)
"""One claim, one statement: the function ``ecp_claim_runnable`` (migration ``core_0007``), so
that its statement is planned once per session instead of at every claim (ADR 0065). The
tenants with runnable runs are found by a loose index scan of ``ecp_runs_runnable_by_tenant``
(one probe each); each tenant offers its first ``candidates_per_tenant`` eligible runs from the
same index and its last service from one probe of ``ecp_runs_dispatch_claims``. Candidates are
locked in order, skipping locked ones, and the claimed run is stamped from a sequence so its
tenant becomes the most recently served. In a tenant with limits (migration ``core_0013``) a
run without a slot is offered only while its tenant and deployment look under their limits;
claimed, it is ``admitting`` and :data:`_ADMIT` decides under the tenant's limits row."""

_ADMIT = "SELECT ecp_admit_run(%s, %s) AS admitted"
"""Admit a claimed run (ADR 0079): the tenant's limits row held, the slots counted afresh."""


_LOCK_READ = f"""
SELECT {", ".join(f"r.{c}" for c in RUNS.columns)},
       h.attempt AS head__attempt, h.record_digest AS head__record_digest,
       {context_columns("r")}"""
# ecp_runs.run_id is COLLATE "C", the head's run_id is not: compared under the head's collation so
# that its primary key answers (tests/storage/test_lock_plans.py).
_LOCK_JOINS = f"""
  LEFT JOIN ecp_audit_heads h ON h.run_id = r.run_id COLLATE "default"{context_joins("r")}"""
_LOCK = f"""{_LOCK_READ}
  FROM ecp_runs r{_LOCK_JOINS}
 WHERE r.run_id = %s AND r.tenant_id = %s
   FOR UPDATE OF r
"""
"""The run, row-locked, with what its attempts read next: its chain head (when it agrees with
the run's count of attempts), the tenant's audit settings, the deployment's policy and whether
the deployment has webhook subscriptions (read next, when it has). One statement instead of four
or more per attempt (ADR 0059)."""
_LOCK_FOR_APPROVAL = f"""{_LOCK_READ}, {prefixed("approval__", APPROVALS, "a")}
  FROM ecp_runs r{_LOCK_JOINS}
  JOIN ecp_approvals a ON a.approval_id = %(approval_id)s
 WHERE r.run_id = (SELECT x.run_id COLLATE "C" FROM ecp_approvals x
                    WHERE x.approval_id = %(approval_id)s AND x.tenant_id = %(tenant_id)s)
   AND r.tenant_id = %(tenant_id)s
   FOR UPDATE OF r
"""  # noqa: S608 - column names are ours
""":data:`_LOCK` of the run an approval belongs to, with the approval (ADR 0067). The run is
found by its id (the subquery), so the plan is the lock's own whatever the statistics say."""


_CONTEXT = f"""
SELECT {context_columns("k")}
  FROM (SELECT %(tenant_id)s::text AS tenant_id, %(deployment_ref)s::text AS deployment_ref) k
{context_joins("k")}
"""  # noqa: S608 - column names are ours
"""What :data:`_LOCK` joins to a run, for a run this transaction is adding (ADR 0067) and whose
deployment it has not read (a deployment's read joins the same, :mod:`ecp_postgres.run_context`)."""
_INSERT = RUNS.insert_sql(on_conflict_nothing=True)
_UPDATE = RUNS.update_sql("run_id") + " AND tenant_id = %(tenant_id)s"


def _run_key(run_id: str) -> tuple[str, str]:
    """The batch key of a run's insert or save (a later one replaces it)."""
    return ("run", run_id)


def _added_key(run_id: str) -> tuple[str, str]:
    """The memo key of a run this transaction added, as last saved."""
    return ("run_added", run_id)


_TENANTS = """
WITH RECURSIVE tenants AS (
    (SELECT tenant_id FROM ecp_runs ORDER BY tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.tenant_id FROM ecp_runs r WHERE r.tenant_id > t.tenant_id
             ORDER BY r.tenant_id LIMIT 1)
      FROM tenants t WHERE t.tenant_id IS NOT NULL
)
SELECT tenant_id FROM tenants WHERE tenant_id IS NOT NULL
"""
"""The tenants that have runs, skipping from one to the next along ``ecp_runs_by_tenant`` (a
loose index scan, as the claim's): a ``DISTINCT`` read the whole index, one entry per run, on
every retention sweep. In the index's collation; :meth:`PostgresRuns.tenants` sorts by code point."""


class PostgresRuns(Repository):
    """RunRepository on PostgreSQL."""

    def add(self, run: Run) -> None:
        """Store a new run (its id and idempotency key must be new).

        The insert waits in the batch like a save (Conflict at the next statement or commit); a
        save before it leaves inserts the saved run instead, and :meth:`lock` answers for the
        run without sending it.
        """
        if self._pending(_run_key(run.run_id)) is not None:  # added or saved already
            raise exists("run", run.run_id)
        self._queue(run, insert=True)

    def _queue(self, run: Run, *, insert: bool) -> None:
        """Queue the run's insert or update; a later one of the same run replaces it."""
        if insert:
            self._memo()[_added_key(run.run_id)] = run
        sql, error = (_INSERT, exists) if insert else (_UPDATE, missing)
        write = PendingWrite(
            sql, RUNS.params(run), expected=1, error=lambda: error("run", run.run_id)
        )
        self._write(write, _run_key(run.run_id))

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s", (run_id, tenant_id))

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run, row-locked until the transaction ends.

        The same statement reads what the run's next attempts need and the transaction
        remembers it (see :data:`_LOCK`).
        """
        added = self._added(tenant_id, run_id)
        if added is not None:
            return added
        session = session_of(self._conn)
        if session is not None and session.pending.only_on("ecp_tasks"):
            # a task's change waits for the run's writes: the lock reads nothing it changes
            row = session.execute_before_writes(_LOCK, (run_id, tenant_id)).fetchone()
        else:
            row = self._conn.execute(_LOCK, (run_id, tenant_id)).fetchone()
        return None if row is None else self._locked(row)

    def _added(self, tenant_id: str, run_id: str) -> Run | None:
        """The run whose insert still waits in the batch, with what :data:`_LOCK` would join.

        No other transaction can see the run before it commits, so it needs no row lock; its
        chain has no head yet. The read leaves the insert waiting (ADR 0067).
        """
        queued = self._pending(_run_key(run_id))
        session = session_of(self._conn)
        if queued is None or queued.sql != _INSERT or session is None:
            return None
        run: Run = self._memo()[_added_key(run_id)]
        if run.tenant_id != tenant_id:
            return None
        self._memo()[head_key(run_id)] = None
        if not known(self._conn, tenant_id, run.deployment_ref):
            params = {"tenant_id": tenant_id, "deployment_ref": run.deployment_ref}
            row = session.execute_before_writes(_CONTEXT, params).fetchone()
            assert row is not None  # noqa: S101 - the statement always returns its one row
            remember(self._conn, row, tenant_id, run.deployment_ref, read_subscriptions=True)
        else:  # the start's read of the deployment joined it; subscriptions, when any, now
            PostgresWebhooks(self._conn).live_for(tenant_id, run.deployment_ref, before_writes=True)
        return run

    def lock_for_approval(
        self, tenant_id: str, approval_id: str
    ) -> tuple[ApprovalRecord, Run | None] | None:
        """The tenant's approval and its run, locked as :meth:`lock` locks it, in one statement.

        An approval whose run is not stored is read alone.
        """
        params = {"approval_id": approval_id, "tenant_id": tenant_id}
        row = self._conn.execute(_LOCK_FOR_APPROVAL, params).fetchone()
        if row is None:
            approval = PostgresApprovals(self._conn).get(tenant_id, approval_id)
            return None if approval is None else (approval, None)
        return APPROVALS.load(part(row, "approval__")), self._locked(row)

    def _locked(self, row: dict[str, Any]) -> Run:
        """The run of a lock's row; the transaction remembers what the row joined."""
        memo = self._memo()
        run_id, tenant_id = row["run_id"], row["tenant_id"]
        head = part(row, "head__")
        # A lock that waited saw the run's newest row but the head as of the statement's start:
        # it is remembered only when it agrees with the run's count of attempts.
        if (head["attempt"] or 0) == row["attempts"]:
            memo[head_key(run_id)] = (
                None if head["attempt"] is None else ChainHead(run_id=run_id, **head)
            )
        remember(self._conn, row, tenant_id, row["deployment_ref"], read_subscriptions=True)
        return RUNS.load(row)

    def save(self, run: Run) -> None:
        """Replace a stored run.

        The write waits for the transaction's next statement or commit; a later save of the run
        in the same transaction replaces it (and a run added but not yet sent is inserted as
        saved).
        """
        queued = self._pending(_run_key(run.run_id))
        # A run added in this transaction and not sent yet is inserted as saved.
        self._queue(run, insert=queued is not None and queued.sql == _INSERT)

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

    def search(
        self, tenant_id: str, where: RunFilter, *, limit: int, before: str | None = None
    ) -> list[Run]:
        """The runs ``where`` admits, newest first, older than ``before`` (one statement).

        Only the filters given enter the statement; the order is the one of ``ecp_runs_by_tenant``.
        """
        clauses, values = search_clauses(where)
        if before is not None:
            clauses.append("run_id < %s")
            values.append(before)
        condition = " AND ".join(["tenant_id = %s", *clauses])
        return self._all(
            RUNS,
            f"WHERE {condition} ORDER BY run_id DESC LIMIT %s",
            (tenant_id, *values, limit),
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
        if row["admitting"]:  # committed at once by the caller: no savepoint needed
            self._conn.execute(_ADMIT, (row["tenant_id"], row["run_id"]))
            return RunClaim(**row)
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
        roll_back_to(self._conn, "ecp_run_claim")

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

    def pause_deployment_runs(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> int:
        """Add (or remove) the deployment's pause on each of its runs that has not ended.

        Through ``ecp_runs_live_by_deployment``; the statuses are literals so that it applies.
        ``paused_by`` keeps the enum's order (run, then deployment), as the core writes it; a run
        paused gives up its slot, as :class:`~ecp_core.runs.run.model.Run` does.
        """
        return self._conn.execute(
            "UPDATE ecp_runs SET paused_by = CASE WHEN %(paused)s"
            " THEN paused_by || '[\"deployment\"]'::jsonb ELSE paused_by - 'deployment' END,"
            " holds_slot = holds_slot AND NOT %(paused)s"
            " WHERE tenant_id = %(tenant)s AND deployment_ref = %(ref)s"
            " AND status NOT IN ('COMPLETED', 'FAILED', 'TERMINATED_BY_POLICY', 'CANCELED')"
            " AND (paused_by ? 'deployment') <> %(paused)s",
            {"paused": paused, "tenant": tenant_id, "ref": deployment_ref},
        ).rowcount

    def lock_due_timers(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """Runs whose timer is due, earliest first, row-locked; locked ones are skipped.

        Through ``ecp_runs_timers_due`` (migration ``core_0012``), whose rows are exactly the
        runs waiting on a timer, so a sweep that finds none reads one index page.
        """
        rows = self._conn.execute(
            "SELECT tenant_id, run_id FROM ecp_runs"
            " WHERE status = 'WAITING_TIMER' AND wait_until <= %(now)s"
            " ORDER BY wait_until, run_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
            {"now": now, "limit": limit},
        ).fetchall()
        return [(row["tenant_id"], row["run_id"]) for row in rows]

    def earliest_timer(self) -> datetime | None:
        """The first entry of ``ecp_runs_timers_due``: one index probe."""
        row = self._conn.execute(
            "SELECT min(wait_until) AS due FROM ecp_runs WHERE status = 'WAITING_TIMER'"
        ).fetchone()
        return None if row is None else row["due"]

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal, not yet erased, unheld runs updated before the instant, oldest first.

        The statuses are literals, not parameters, so the partial index ecp_runs_expired applies.
        """
        return self._all(
            RUNS,
            "WHERE tenant_id = %s AND status IN ('COMPLETED', 'FAILED', 'CANCELED')"
            " AND erased_at IS NULL"
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
        """Every tenant that has runs, in code-point order (one index probe per tenant)."""
        return sorted(row["tenant_id"] for row in self._conn.execute(_TENANTS).fetchall())
