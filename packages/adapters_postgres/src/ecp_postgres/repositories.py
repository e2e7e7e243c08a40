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
from ecp_core.types import ApprovalStatus
from ecp_postgres.rows import Table

GRAPHS = Table("ecp_graph_versions", GraphVersion, jsonb=["definition"])
DEPLOYMENTS = Table("ecp_deployments", Deployment)
POLICIES = Table("ecp_policies", DeploymentPolicy, jsonb=["deny_capabilities"])
CONTRACTS = Table("ecp_contracts", Contract, jsonb=["json_schema", "metadata"])
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
