"""In-memory repositories over :class:`~ecp_core.memory.store.Tables`."""

import copy
import functools
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.audit.erasure import check_erasure
from ecp_core.audit.record import DIGEST_VERSION, ChainHead, NodeAuditRecord
from ecp_core.contracts.model import Contract
from ecp_core.deployments import Deployment
from ecp_core.errors import ChainConflict, Conflict, NotFound
from ecp_core.graphs.definition import GraphVersion
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.retention.model import SYSTEM_TENANT, LegalHold, RetentionAuditEntry, RetentionPolicy
from ecp_core.types import ApprovalStatus

if TYPE_CHECKING:
    from ecp_core.memory.store import Tables


P = ParamSpec("P")
R = TypeVar("R")


def detached(read: Callable[P, R]) -> Callable[P, R]:
    """Return a deep copy of what ``read`` returns, so callers never share stored objects."""

    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return copy.deepcopy(read(*args, **kwargs))

    return wrapper


class _Repository:
    def __init__(self, tables: "Tables") -> None:
        self._t = tables

    def _held(self, tenant_id: str, run_id: str) -> bool:
        """Whether an active legal hold covers the run (selection skips held runs)."""
        return any(h.covers(tenant_id, run_id) for h in self._t.table("legal_holds").values())


class MemoryGraphs(_Repository):
    """GraphRepository in memory."""

    def add(self, version: GraphVersion) -> None:
        """Store a new version."""
        key = (version.tenant_id, version.graph_id, version.version)
        if key in self._t.table("graphs"):
            raise Conflict(f"graph {version.ref} exists")
        self._t.put("graphs", key, version)

    @detached
    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        return self._t.table("graphs").get((tenant_id, graph_id, version))

    def _versions(self, tenant_id: str, graph_id: str) -> list[GraphVersion]:
        return sorted(
            (
                v
                for (t, g, _), v in self._t.table("graphs").items()
                if (t, g) == (tenant_id, graph_id)
            ),
            key=lambda v: v.version,
        )

    @detached
    def latest(self, tenant_id: str, graph_id: str) -> GraphVersion | None:
        """The highest version, or None."""
        versions = self._versions(tenant_id, graph_id)
        return versions[-1] if versions else None

    @detached
    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this digest, or None."""
        return next((v for v in self._versions(tenant_id, graph_id) if v.digest == digest), None)


class MemoryDeployments(_Repository):
    """DeploymentRepository in memory."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment."""
        key = (deployment.tenant_id, deployment.deployment_ref)
        if key in self._t.table("deployments"):
            raise Conflict(f"deployment {deployment.deployment_ref} exists")
        self._t.put("deployments", key, deployment)

    @detached
    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        return self._t.table("deployments").get((tenant_id, deployment_ref))


class MemoryPolicies(_Repository):
    """PolicyRepository in memory."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store the current policy."""
        self._t.put("policies", (policy.tenant_id, policy.deployment_ref), policy)

    @detached
    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        return self._t.table("policies").get((tenant_id, deployment_ref))


class MemoryApprovals(_Repository):
    """ApprovalRepository in memory."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval."""
        if approval.approval_id in self._t.table("approvals"):
            raise Conflict(f"approval {approval.approval_id} exists")
        self._t.put("approvals", approval.approval_id, approval)

    @detached
    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        found: ApprovalRecord | None = self._t.table("approvals").get(approval_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval."""
        if self.get(approval.tenant_id, approval.approval_id) is None:
            raise NotFound(f"approval {approval.approval_id} not found")
        self._t.put("approvals", approval.approval_id, approval)

    @detached
    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals in creation order."""
        found = [
            a
            for a in self._t.table("approvals").values()
            if a.tenant_id == tenant_id and a.run_id == run_id and status in (None, a.status)
        ]
        return sorted(found, key=lambda a: (a.created_at, a.approval_id))

    @detached
    def overdue(self, now: datetime, limit: int) -> list[ApprovalRecord]:
        """Pending approvals past their deadline."""
        found = [
            a
            for a in self._t.table("approvals").values()
            if a.status is ApprovalStatus.PENDING
            and a.sla_deadline is not None
            and a.sla_deadline < now
        ]
        return sorted(found, key=lambda a: (a.sla_deadline, a.approval_id))[:limit]

    def add_action(self, action: ApprovalActionRecord) -> None:
        """Append to the trail."""
        self._t.append("approval_actions", (action.tenant_id, action.approval_id), action)

    @detached
    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """The trail in order."""
        return list(self._t.table("approval_actions").get((tenant_id, approval_id), []))


class MemoryAudit(_Repository):
    """AuditRepository in memory."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head."""
        return self._t.table("audit_heads").get(run_id)

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Extend the chain by ``record``."""
        head = self.head(record.run_id)
        expected_attempt = 1 if head is None else head.attempt + 1
        expected_previous = None if head is None else head.record_digest
        if record.attempt != expected_attempt or record.previous_record_digest != expected_previous:
            raise ChainConflict(
                f"record {record.audit_id} does not extend run {record.run_id}'s chain"
            )
        new_head = ChainHead(
            run_id=record.run_id, attempt=record.attempt, record_digest=record.record_digest
        )
        self._t.append("audit_chains", record.run_id, record.audit_id)
        self._t.put("audit", record.audit_id, record)
        self._t.put("audit_heads", record.run_id, new_head)
        return new_head

    @detached
    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        records = self._t.table("audit")
        chain = [records[audit_id] for audit_id in self._t.table("audit_chains").get(run_id, [])]
        return [record for record in chain if record.tenant_id == tenant_id]

    @detached
    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id, then chain order, after ``after``."""
        run_ids = [run_id] if run_id is not None else sorted(self._t.table("audit_chains"))
        found = [
            record
            for rid in run_ids
            for record in self.for_run(tenant_id, rid)
            if record.deployment_ref == deployment_ref
            and (after is None or (record.run_id, record.attempt) > after)
        ]
        return found if limit is None else found[:limit]

    @detached
    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        record: NodeAuditRecord | None = self._t.table("audit").get(audit_id)
        return record if record is not None and record.tenant_id == tenant_id else None

    @detached
    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Unerased version 2 records created before the instant, oldest first."""
        found = [
            r
            for r in self._t.table("audit").values()
            if r.tenant_id == tenant_id
            and not self._held(tenant_id, r.run_id)
            and r.digest_version == DIGEST_VERSION
            and not r.erased
            and r.created_at < created_before
        ]
        return sorted(found, key=lambda r: (r.created_at, r.audit_id))[:limit]

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erasure; refuse any change beyond personal data and erasure fields."""
        stored = self.get(record.tenant_id, record.audit_id)
        if stored is None:
            raise NotFound(f"audit record {record.audit_id} not found")
        check_erasure(stored, record)
        self._t.put("audit", record.audit_id, record)


class MemoryRetention(_Repository):
    """RetentionRepository in memory."""

    @detached
    def policy(self, tenant_id: str) -> RetentionPolicy | None:
        """The stored policy row, or None."""
        return self._t.table("retention_policies").get(tenant_id)

    def put_policy(self, policy: RetentionPolicy) -> None:
        """Store a policy row."""
        self._t.put("retention_policies", policy.tenant_id, policy)

    def policy_tenants(self) -> list[str]:
        """Tenants with a policy row of their own."""
        return sorted(t for t in self._t.table("retention_policies") if t != SYSTEM_TENANT)

    def add_hold(self, hold: LegalHold) -> None:
        """Store a new hold."""
        if hold.hold_id in self._t.table("legal_holds"):
            raise Conflict(f"hold {hold.hold_id} exists")
        self._t.put("legal_holds", hold.hold_id, hold)

    @detached
    def hold(self, tenant_id: str, hold_id: str) -> LegalHold | None:
        """One hold of the tenant, or None."""
        found: LegalHold | None = self._t.table("legal_holds").get(hold_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    @detached
    def holds(self, tenant_id: str, *, active_only: bool = False) -> list[LegalHold]:
        """The tenant's holds, oldest first."""
        found = [
            h
            for h in self._t.table("legal_holds").values()
            if h.tenant_id == tenant_id and (h.active or not active_only)
        ]
        return sorted(found, key=lambda h: (h.created_at, h.hold_id))

    def save_hold(self, hold: LegalHold) -> None:
        """Replace a stored hold."""
        if self.hold(hold.tenant_id, hold.hold_id) is None:
            raise NotFound(f"hold {hold.hold_id} not found")
        self._t.put("legal_holds", hold.hold_id, hold)

    def append_log(self, entry: RetentionAuditEntry) -> None:
        """Append to the log (an entry id appears once)."""
        if entry.entry_id in self._t.table("retention_log_ids"):
            raise Conflict(f"log entry {entry.entry_id} exists")
        self._t.put("retention_log_ids", entry.entry_id, entry.tenant_id)
        self._t.append("retention_log", entry.tenant_id, entry)

    @detached
    def log(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[RetentionAuditEntry]:
        """Newest first."""
        entries = sorted(
            self._t.table("retention_log").get(tenant_id, []),
            key=lambda e: e.entry_id,
            reverse=True,
        )
        if before is not None:
            entries = [e for e in entries if e.entry_id < before]
        return entries[:limit]

    def lock_tenant(self, tenant_id: str, *, exclusive: bool) -> None:
        """Nothing to do: a memory unit of work already holds the store lock."""


class MemoryContracts(_Repository):
    """ContractRepository in memory."""

    def add(self, contract: Contract) -> None:
        """Store a new contract."""
        key = (contract.tenant_id, contract.name)
        if key in self._t.table("contracts"):
            raise Conflict(f"contract {contract.name} exists")
        self._t.put("contracts", key, contract)

    @detached
    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        return self._t.table("contracts").get((tenant_id, name))
