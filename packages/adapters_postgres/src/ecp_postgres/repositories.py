"""PostgreSQL repositories: one class per port, all on the unit of work's connection."""

import collections
import threading
from datetime import datetime
from typing import Any

import psycopg

from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.audit.erasure import ERASABLE_FIELDS, check_erasure
from ecp_core.audit.record import DIGEST_VERSION, PII_FIELDS, ChainHead, NodeAuditRecord
from ecp_core.contracts.model import Contract
from ecp_core.deployments import Deployment
from ecp_core.errors import ChainConflict, Conflict, NotFound
from ecp_core.graphs.definition import GraphVersion
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.dispatch import CLAIM_CANDIDATE_BUDGET
from ecp_core.runs.model import Run, RunClaim
from ecp_core.types import ApprovalStatus, RunStatus
from ecp_postgres.rows import Table

GRAPHS = Table("ecp_graph_versions", GraphVersion, jsonb=["definition"])
DEPLOYMENTS = Table("ecp_deployments", Deployment)
POLICIES = Table("ecp_policies", DeploymentPolicy, jsonb=["deny_capabilities"])
CONTRACTS = Table("ecp_contracts", Contract, jsonb=["json_schema", "metadata"])
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
    ],
)
_PAYLOADS = ("state", "output", "metadata", "artifacts", "error")
_HEADER = tuple(c for c in RUNS.columns if c not in _PAYLOADS)
"""Run columns a header read returns and a header write sets (``paused`` and ``approved_action``
are written, never read: they may hold payloads too)."""
_HEADER_READ = tuple(c for c in _HEADER if c not in ("paused", "approved_action"))

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
of ``ecp_runs_dispatch_claims``. Candidates are locked in order, skipping held ones, and the
claimed run is stamped from a sequence so its tenant becomes the most recently served."""

APPROVALS = Table(
    "ecp_approvals",
    ApprovalRecord,
    jsonb=[
        "allowed_actions",
        "proposed_payload",
        "context_excerpt",
        "urgency_metadata",
        "requested_by",
        "resolution",
    ],
)
APPROVAL_ACTIONS = Table("ecp_approval_actions", ApprovalActionRecord, jsonb=["actor", "metadata"])
AUDIT = Table(
    "ecp_audit_records",
    NodeAuditRecord,
    jsonb=["pii_commitments"],
    json=[field for field in PII_FIELDS if field not in ("stdout", "stderr")],
)


def _not_held(table: str) -> str:
    """Rows of ``table`` whose run no active legal hold covers (held runs are left out)."""
    holds = "SELECT 1 FROM ecp_legal_holds h WHERE h.released_at IS NULL"
    return (
        f"NOT EXISTS ({holds} AND h.tenant_id = {table}.tenant_id"
        f" AND (h.run_id IS NULL OR h.run_id = {table}.run_id))"
    )


class GraphCache:
    """A bounded, thread-safe map of immutable graph versions, shared by a store's units of work."""

    def __init__(self, size: int = 1024) -> None:
        """Keep at most ``size`` versions, dropping the least recently used."""
        self._size = size
        self._items: collections.OrderedDict[tuple[str, str, int], GraphVersion] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> GraphVersion | None:
        """The cached version, or None."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, int], version: GraphVersion) -> None:
        """Remember ``version``."""
        with self._lock:
            self._items[key] = version
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class _Repository:
    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self._conn = conn

    def _one(self, table: Table, where: str, params: tuple[Any, ...]) -> Any:  # noqa: ANN401
        row = self._conn.execute(f"{table.select_sql()} WHERE {where}", params).fetchone()
        return None if row is None else table.load(row)

    def _all(self, table: Table, tail: str, params: tuple[Any, ...]) -> list[Any]:
        rows = self._conn.execute(f"{table.select_sql()} {tail}", params).fetchall()
        return [table.load(row) for row in rows]

    def _insert(self, table: Table, value: object, conflict: str) -> None:
        cursor = self._conn.execute(table.insert_sql(on_conflict_nothing=True), table.params(value))
        if cursor.rowcount != 1:
            raise Conflict(conflict)


class PostgresGraphs(_Repository):
    """GraphRepository on PostgreSQL; versions are immutable, so reads by number are cached."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]], cache: "GraphCache") -> None:
        """Read through ``cache``, which the store shares between units of work."""
        super().__init__(conn)
        self._cache = cache

    def add(self, version: GraphVersion) -> None:
        """Store a new version."""
        self._insert(GRAPHS, version, f"graph {version.ref} exists")

    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        key = (tenant_id, graph_id, version)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        found: GraphVersion | None = self._one(
            GRAPHS, "tenant_id = %s AND graph_id = %s AND version = %s", key
        )
        if found is not None:
            self._cache.put(key, found)
        return found

    def latest(self, tenant_id: str, graph_id: str) -> GraphVersion | None:
        """The highest version, or None."""
        found = self._all(
            GRAPHS,
            "WHERE tenant_id = %s AND graph_id = %s ORDER BY version DESC LIMIT 1",
            (tenant_id, graph_id),
        )
        return found[0] if found else None

    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this digest, or None."""
        return self._one(
            GRAPHS,
            "tenant_id = %s AND graph_id = %s AND digest = %s",
            (tenant_id, graph_id, digest),
        )  # type: ignore[no-any-return]


class PostgresDeployments(_Repository):
    """DeploymentRepository on PostgreSQL."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment."""
        self._insert(DEPLOYMENTS, deployment, f"deployment {deployment.deployment_ref} exists")

    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        return self._one(
            DEPLOYMENTS, "tenant_id = %s AND deployment_ref = %s", (tenant_id, deployment_ref)
        )  # type: ignore[no-any-return]


class PostgresPolicies(_Repository):
    """PolicyRepository on PostgreSQL."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store the current policy."""
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in POLICIES.columns)
        self._conn.execute(
            f"{POLICIES.insert_sql()} ON CONFLICT (tenant_id, deployment_ref) DO UPDATE SET {sets}",
            POLICIES.params(policy),
        )

    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        return self._one(
            POLICIES, "tenant_id = %s AND deployment_ref = %s", (tenant_id, deployment_ref)
        )  # type: ignore[no-any-return]


class PostgresContracts(_Repository):
    """ContractRepository on PostgreSQL."""

    def add(self, contract: Contract) -> None:
        """Store a new contract."""
        self._insert(CONTRACTS, contract, f"contract {contract.name} exists")

    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        return self._one(CONTRACTS, "tenant_id = %s AND name = %s", (tenant_id, name))  # type: ignore[no-any-return]


class PostgresRuns(_Repository):
    """RunRepository on PostgreSQL."""

    def add(self, run: Run) -> None:
        """Store a new run (its id and idempotency key must be new)."""
        self._insert(RUNS, run, f"run {run.run_id} exists")

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s", (run_id, tenant_id))  # type: ignore[no-any-return]

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run, row-locked until the transaction ends."""
        return self._one(RUNS, "run_id = %s AND tenant_id = %s FOR UPDATE", (run_id, tenant_id))  # type: ignore[no-any-return]

    def save(self, run: Run) -> None:
        """Replace a stored run."""
        cursor = self._conn.execute(
            RUNS.update_sql("run_id") + " AND tenant_id = %(tenant_id)s", RUNS.params(run)
        )
        if cursor.rowcount != 1:
            raise NotFound(f"run {run.run_id} not found")

    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this key, or None."""
        return self._one(
            RUNS,
            "tenant_id = %s AND deployment_ref = %s AND idempotency_key = %s",
            (tenant_id, deployment_ref, key),
        )  # type: ignore[no-any-return]

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

    def record_dispatch_failure(self, tenant_id: str, run_id: str, not_before: datetime) -> int:
        """Count the failure and back off, touching only the dispatch columns."""
        row = self._conn.execute(
            "UPDATE ecp_runs SET dispatch_failures = dispatch_failures + 1,"
            " dispatch_not_before = %s, dispatch_claim = nextval('ecp_run_dispatch_claims')"
            " WHERE run_id = %s AND tenant_id = %s RETURNING dispatch_failures",
            (not_before, run_id, tenant_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"run {run_id} not found")
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
            raise NotFound(f"run {run.run_id} not found")

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal, not yet erased, unheld runs updated before the instant, oldest first.

        The statuses are literals, not parameters, so the partial index ecp_runs_expired applies.
        """
        return self._all(
            RUNS,
            "WHERE tenant_id = %s AND status IN ('COMPLETED', 'FAILED') AND erased_at IS NULL"
            f" AND updated_at < %s AND {_not_held('ecp_runs')}"
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


class PostgresApprovals(_Repository):
    """ApprovalRepository on PostgreSQL."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval."""
        self._insert(APPROVALS, approval, f"approval {approval.approval_id} exists")

    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        return self._one(APPROVALS, "approval_id = %s AND tenant_id = %s", (approval_id, tenant_id))  # type: ignore[no-any-return]

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval."""
        sql = APPROVALS.update_sql("approval_id") + " AND tenant_id = %(tenant_id)s"
        if self._conn.execute(sql, APPROVALS.params(approval)).rowcount != 1:
            raise NotFound(f"approval {approval.approval_id} not found")

    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals in creation order."""
        if status is None:
            return self._all(
                APPROVALS,
                "WHERE tenant_id = %s AND run_id = %s ORDER BY created_at, approval_id",
                (tenant_id, run_id),
            )
        return self._all(
            APPROVALS,
            "WHERE tenant_id = %s AND run_id = %s AND status = %s ORDER BY created_at, approval_id",
            (tenant_id, run_id, status.value),
        )

    def overdue(self, now: datetime, limit: int) -> list[ApprovalRecord]:
        """Pending approvals past their deadline."""
        return self._all(
            APPROVALS,
            "WHERE status = 'pending' AND sla_deadline IS NOT NULL AND sla_deadline < %s ORDER BY sla_deadline, approval_id LIMIT %s",
            (now, limit),
        )

    def add_action(self, action: ApprovalActionRecord) -> None:
        """Append to the trail."""
        self._conn.execute(APPROVAL_ACTIONS.insert_sql(), APPROVAL_ACTIONS.params(action))

    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """The trail in order."""
        return self._all(
            APPROVAL_ACTIONS,
            "WHERE tenant_id = %s AND approval_id = %s ORDER BY sequence",
            (tenant_id, approval_id),
        )


class PostgresAudit(_Repository):
    """AuditRepository on PostgreSQL; the head row is locked while a chain is extended."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head, row-locked until the transaction ends."""
        row = self._conn.execute(
            "SELECT run_id, attempt, record_digest FROM ecp_audit_heads WHERE run_id = %s FOR UPDATE",
            (run_id,),
        ).fetchone()
        return None if row is None else ChainHead(**row)

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Extend the chain by ``record`` (ChainConflict unless it follows the current head).

        The head moves only from exactly the predecessor the record names, so no separate read
        is needed: a head that moved meanwhile matches no row.
        """
        new_head = ChainHead(
            run_id=record.run_id, attempt=record.attempt, record_digest=record.record_digest
        )
        if record.attempt == 1 and record.previous_record_digest is None:
            moved = self._conn.execute(
                "INSERT INTO ecp_audit_heads (run_id, attempt, record_digest) VALUES (%s, 1, %s) ON CONFLICT DO NOTHING",
                (record.run_id, record.record_digest),
            )
        else:
            moved = self._conn.execute(
                "UPDATE ecp_audit_heads SET attempt = %s, record_digest = %s"
                " WHERE run_id = %s AND attempt = %s AND record_digest = %s",
                (
                    record.attempt,
                    record.record_digest,
                    record.run_id,
                    record.attempt - 1,
                    record.previous_record_digest,
                ),
            )
        if moved.rowcount != 1:
            raise ChainConflict(
                f"record {record.audit_id} does not extend run {record.run_id}'s chain"
            )
        cursor = self._conn.execute(
            AUDIT.insert_sql(on_conflict_nothing=True), AUDIT.params(record)
        )
        if cursor.rowcount != 1:
            raise ChainConflict(f"record {record.audit_id} exists")
        return new_head

    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        return self._all(
            AUDIT, "WHERE tenant_id = %s AND run_id = %s ORDER BY attempt", (tenant_id, run_id)
        )

    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id (code-point order), then chain order."""
        where = ["tenant_id = %s", "deployment_ref = %s"]
        params: list[Any] = [tenant_id, deployment_ref]
        if run_id is not None:
            where.append("run_id = %s")
            params.append(run_id)
        if after is not None:
            where.append('(run_id COLLATE "C", attempt) > (%s, %s)')
            params.extend(after)
        tail = f'WHERE {" AND ".join(where)} ORDER BY run_id COLLATE "C", attempt'
        if limit is not None:
            tail += " LIMIT %s"
            params.append(limit)
        return self._all(AUDIT, tail, tuple(params))

    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        return self._one(AUDIT, "audit_id = %s AND tenant_id = %s", (audit_id, tenant_id))  # type: ignore[no-any-return]

    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Unerased, unheld version 2 records created before the instant, oldest first.

        The digest version is a literal, not a parameter, so the partial index always applies.
        """
        return self._all(
            AUDIT,
            f"WHERE tenant_id = %s AND digest_version = {int(DIGEST_VERSION)} AND NOT erased"
            f" AND created_at < %s AND {_not_held('ecp_audit_records')}"
            ' ORDER BY created_at, audit_id COLLATE "C" LIMIT %s',
            (tenant_id, created_before, limit),
        )

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erasure; refuse any change beyond personal data and erasure fields."""
        stored = self.get(record.tenant_id, record.audit_id)
        if stored is None:
            raise NotFound(f"audit record {record.audit_id} not found")
        check_erasure(stored, record)
        params = AUDIT.params(record)
        sets = ", ".join(f"{field} = %({field})s" for field in sorted(ERASABLE_FIELDS))
        self._conn.execute(
            f"UPDATE ecp_audit_records SET {sets} WHERE audit_id = %(audit_id)s",  # noqa: S608
            params,
        )
