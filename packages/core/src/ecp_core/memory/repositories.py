"""In-memory repositories over :class:`~ecp_core.memory.store.Tables`."""

import copy
import functools
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import attrs

from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.audit.erasure import check_erasure
from ecp_core.audit.record import DIGEST_VERSION, ChainHead, NodeAuditRecord
from ecp_core.contracts.model import Contract
from ecp_core.deployments import Deployment
from ecp_core.errors import ChainConflict, Conflict, NotFound
from ecp_core.graphs.definition import GraphVersion
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.retention.model import SYSTEM_TENANT, LegalHold, RetentionAuditEntry, RetentionPolicy
from ecp_core.runs.dispatch import candidates_per_tenant
from ecp_core.runs.model import Run, RunClaim
from ecp_core.types import ApprovalStatus, RunStatus

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


@attrs.frozen
class _Dispatch:
    """A run's dispatch bookkeeping: failures in a row, backoff end, latest claim number."""

    failures: int = 0
    not_before: datetime | None = None
    claim: int | None = None


_PAYLOAD_KEPT = ("state", "output", "metadata", "artifacts", "error")
_PAYLOAD_EMPTY: dict[str, Any] = {
    "state": {},
    "output": None,
    "paused": None,
    "approved_action": None,
    "metadata": None,
    "artifacts": None,
    "error": None,
}


class MemoryRuns(_Repository):
    """RunRepository in memory."""

    _claimed_at: int | None = None
    """Length of the unit of work's undo log right after its last claim."""

    def add(self, run: Run) -> None:
        """Store a new run."""
        if run.run_id in self._t.table("runs"):
            raise Conflict(f"run {run.run_id} exists")
        self._t.put("runs", run.run_id, run)
        if run.idempotency_key is not None:
            key = (run.tenant_id, run.deployment_ref, run.idempotency_key)
            self._t.put("run_keys", key, run.run_id)

    @detached
    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        run: Run | None = self._t.table("runs").get(run_id)
        return run if run is not None and run.tenant_id == tenant_id else None

    @detached
    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run (the unit of work already holds the store lock)."""
        return self.get(tenant_id, run_id)

    def save(self, run: Run) -> None:
        """Replace a stored run."""
        if self.get(run.tenant_id, run.run_id) is None:
            raise NotFound(f"run {run.run_id} not found")
        self._t.put("runs", run.run_id, run)

    @detached
    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this key, or None."""
        run_id = self._t.table("run_keys").get((tenant_id, deployment_ref, key))
        return None if run_id is None else self.get(tenant_id, run_id)

    def _of(self, tenant_id: str) -> list[Run]:
        return [run for run in self._t.table("runs").values() if run.tenant_id == tenant_id]

    @detached
    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Newest first, older than ``before``."""
        runs = sorted(self._of(tenant_id), key=lambda run: run.run_id, reverse=True)
        if before is not None:
            runs = [run for run in runs if run.run_id < before]
        return runs[:limit]

    def count(self, tenant_id: str) -> int:
        """How many runs the tenant has."""
        return len(self._of(tenant_id))

    @detached
    def runnable(self, limit: int) -> list[Run]:
        """PENDING or RUNNING runs, oldest first."""
        active = (RunStatus.PENDING, RunStatus.RUNNING)
        runs = [run for run in self._t.table("runs").values() if run.status in active]
        return sorted(runs, key=lambda run: run.run_id)[:limit]

    def _dispatch(self, run_id: str) -> _Dispatch:
        found: _Dispatch | None = self._t.table("run_dispatch").get(run_id)
        return found or _Dispatch()

    def _stamp(self) -> int:
        """A claim number above every earlier one."""
        stamps = [d.claim for d in self._t.table("run_dispatch").values() if d.claim is not None]
        return max(stamps, default=0) + 1

    def claim_runnable(self, now: datetime | None = None) -> RunClaim | None:
        """The next run by (rank in its tenant, tenant's last service, id); stamped as claimed.

        The unit of work holds the store lock, so no run is held by another transaction.
        """
        active = (RunStatus.PENDING, RunStatus.RUNNING)
        by_tenant: dict[str, list[str]] = {}
        served: dict[str, int] = {}
        for run in sorted(self._t.table("runs").values(), key=lambda run: run.run_id):
            dispatch = self._dispatch(run.run_id)
            if dispatch.claim is not None:
                served[run.tenant_id] = max(served.get(run.tenant_id, 0), dispatch.claim)
            backing_off = (
                now is not None and dispatch.not_before is not None and dispatch.not_before > now
            )
            if run.status in active and not backing_off:
                by_tenant.setdefault(run.tenant_id, []).append(run.run_id)
        offered = candidates_per_tenant(len(by_tenant))
        candidates = [
            (rank, served.get(tenant, 0), run_id, tenant)
            for tenant, run_ids in by_tenant.items()
            for rank, run_id in enumerate(run_ids[:offered], start=1)
        ]
        if not candidates:
            return None
        _, _, run_id, tenant = min(candidates)
        dispatch = attrs.evolve(self._dispatch(run_id), claim=self._stamp())
        self._t.put("run_dispatch", run_id, dispatch)
        self._claimed_at = None if self._t.undo is None else len(self._t.undo)
        return RunClaim(run_id=run_id, tenant_id=tenant, dispatch_failures=dispatch.failures)

    def undo_to_claim(self) -> None:
        """Undo the writes logged since the claim."""
        undo = self._t.undo
        mark = self._claimed_at
        if undo is None or mark is None:
            msg = "no claim to go back to"
            raise RuntimeError(msg)
        while len(undo) > mark:
            undo.pop()()

    def record_dispatch_failure(self, tenant_id: str, run_id: str, not_before: datetime) -> int:
        """Count the failure and back off; stamped as a claim."""
        if self.get(tenant_id, run_id) is None:
            raise NotFound(f"run {run_id} not found")
        before = self._dispatch(run_id)
        after = _Dispatch(failures=before.failures + 1, not_before=not_before, claim=self._stamp())
        self._t.put("run_dispatch", run_id, after)
        return after.failures

    def clear_dispatch_failures(self, tenant_id: str, run_id: str) -> None:
        """Reset the count and the backoff."""
        if self.get(tenant_id, run_id) is not None:
            before = self._dispatch(run_id)
            self._t.put("run_dispatch", run_id, _Dispatch(claim=before.claim))

    @detached
    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        """The run without its JSON payloads."""
        run: Run | None = self._t.table("runs").get(run_id)
        if run is None or run.tenant_id != tenant_id:
            return None
        return attrs.evolve(run, **_PAYLOAD_EMPTY)

    def save_header(self, run: Run) -> None:
        """Replace all but the stored payloads."""
        stored: Run | None = self._t.table("runs").get(run.run_id)
        if stored is None or stored.tenant_id != run.tenant_id:
            raise NotFound(f"run {run.run_id} not found")
        kept = {name: getattr(stored, name) for name in _PAYLOAD_KEPT}
        self._t.put("runs", run.run_id, attrs.evolve(run, **kept))

    @detached
    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal runs last updated before the instant, oldest first."""
        terminal = (RunStatus.COMPLETED, RunStatus.FAILED)
        found = [
            run
            for run in self._of(tenant_id)
            if run.status in terminal
            and run.updated_at < updated_before
            and run.erased_at is None
            and not self._held(tenant_id, run.run_id)
        ]
        return sorted(found, key=lambda run: (run.updated_at, run.run_id))[:limit]

    def ids_of(self, tenant_id: str) -> list[str]:
        """Every run id of the tenant, oldest first."""
        return sorted(run.run_id for run in self._of(tenant_id))

    def tenants(self) -> list[str]:
        """Every tenant that has runs."""
        return sorted({run.tenant_id for run in self._t.table("runs").values()})


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
