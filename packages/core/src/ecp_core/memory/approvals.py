"""ApprovalRepository in memory."""

from datetime import UTC, datetime

from ecp_core.errors import exists, missing
from ecp_core.identity import ActorIdentity
from ecp_core.memory.tables import Repository, detached
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.types import ApprovalStatus

_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _by_deadline(deadline: datetime | None, approval_id: str) -> tuple[bool, datetime, str]:
    """The inbox's order: deadlines first, soonest first, then the id."""
    return (deadline is None, deadline or _EARLIEST, approval_id)


class MemoryApprovals(Repository):
    """Approvals by id, and each approval's action trail."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval."""
        if approval.approval_id in self._t.table("approvals"):
            raise exists("approval", approval.approval_id)
        self._t.put("approvals", approval.approval_id, approval)

    @detached
    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        found: ApprovalRecord | None = self._t.table("approvals").get(approval_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval."""
        if self.get(approval.tenant_id, approval.approval_id) is None:
            raise missing("approval", approval.approval_id)
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
    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: str | None = None,
        status: ApprovalStatus | None = None,
        deployment_ref: str | None = None,
        run_id: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> list[ApprovalRecord]:
        """The tenant's approvals matching every filter, by id, after ``after``."""
        found = sorted(
            (
                a
                for a in self._t.table("approvals").values()
                if a.tenant_id == tenant_id
                and status in (None, a.status)
                and deployment_ref in (None, a.deployment_ref)
                and run_id in (None, a.run_id)
                and (after is None or a.approval_id > after)
                and (approver is None or a.admits(approver))
            ),
            key=lambda a: a.approval_id,
        )
        return found[:limit]

    @detached
    def pending_by_deadline(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: tuple[datetime | None, str] | None = None,
        deployment_ref: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> list[ApprovalRecord]:
        """The tenant's pending approvals, soonest deadline first (none last), then by id."""
        found = sorted(
            (
                a
                for a in self._t.table("approvals").values()
                if a.tenant_id == tenant_id
                and a.status is ApprovalStatus.PENDING
                and deployment_ref in (None, a.deployment_ref)
                and (approver is None or a.admits(approver))
            ),
            key=lambda a: _by_deadline(a.sla_deadline, a.approval_id),
        )
        if after is not None:
            position = _by_deadline(*after)
            found = [a for a in found if _by_deadline(a.sla_deadline, a.approval_id) > position]
        return found[:limit]

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
