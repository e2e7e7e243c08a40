"""The approval port: approval records and their action trail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.identity import ActorIdentity
    from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
    from ecp_core.types import ApprovalStatus


class ApprovalRepository(Protocol):
    """Approval records and their action trail."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval."""
        ...

    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        ...

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval."""
        ...

    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals in creation order, optionally of one status."""
        ...

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
        """Up to ``limit`` of the tenant's approvals that match every filter given.

        In approval id order (code point, :mod:`ecp_core.pages`), after the id ``after`` when given.
        With ``approver``, only those that admit them (``ApprovalRecord.admits``: its approver
        lists, and its starter when it forbids self-approval; ADR 0075).
        """
        ...

    def pending_by_deadline(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: tuple[datetime | None, str] | None = None,
        deployment_ref: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> list[ApprovalRecord]:
        """Up to ``limit`` of the tenant's pending approvals, the soonest ``sla_deadline`` first.

        Those without a deadline come last; ties in approval id order (code point). ``after`` is
        the position of the previous page's last one (its deadline or None, and its id). With
        ``deployment_ref``, that deployment's only; with ``approver``, those that admit them (as
        :meth:`page`).
        """
        ...

    def overdue(self, now: datetime, limit: int) -> list[ApprovalRecord]:
        """Pending approvals whose sla_deadline has passed, across tenants."""
        ...

    def add_action(self, action: ApprovalActionRecord) -> None:
        """Append to an approval's action trail."""
        ...

    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """An approval's action trail in order."""
        ...


class WithApprovals(Protocol):
    """A unit of work that reaches the approvals."""

    @property
    def approvals(self) -> ApprovalRepository:
        """The approvals."""
        ...


__all__ = ["ApprovalRepository", "WithApprovals"]
