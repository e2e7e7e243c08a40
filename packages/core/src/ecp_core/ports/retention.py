"""The retention port, the artifact store and the evidence eraser retention drives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.approvals import WithApprovals
from ecp_core.ports.audit import WithAudit
from ecp_core.ports.runs import WithRuns
from ecp_core.ports.tasks import WithTasks
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ecp_core.retention.model import LegalHold, RetentionAuditEntry, RetentionPolicy


class RetentionRepository(Protocol):
    """Retention policies, legal holds and the append-only retention audit log."""

    def policy(self, tenant_id: str) -> RetentionPolicy | None:
        """The stored policy row of a tenant (``default``: the system row), or None."""
        ...

    def put_policy(self, policy: RetentionPolicy) -> None:
        """Store a tenant's policy row, replacing any earlier one."""
        ...

    def policy_tenants(self) -> list[str]:
        """Tenants with a policy row of their own."""
        ...

    def add_hold(self, hold: LegalHold) -> None:
        """Store a new hold."""
        ...

    def hold(self, tenant_id: str, hold_id: str) -> LegalHold | None:
        """One hold of the tenant, or None."""
        ...

    def holds(self, tenant_id: str, *, active_only: bool = False) -> list[LegalHold]:
        """The tenant's holds, oldest first."""
        ...

    def save_hold(self, hold: LegalHold) -> None:
        """Replace a stored hold (its release)."""
        ...

    def append_log(self, entry: RetentionAuditEntry) -> None:
        """Append to the retention audit log."""
        ...

    def log(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[RetentionAuditEntry]:
        """The tenant's log, newest first, older than entry id ``before`` when given."""
        ...

    def lock_tenant(self, tenant_id: str, *, exclusive: bool) -> None:
        """Hold the tenant's retention lock until commit.

        Erasures take it shared and new holds exclusively, so a hold never lands while an erasure
        that cannot see it is in flight.
        """
        ...


class WithRetention(Protocol):
    """A unit of work that reaches the retention policies, holds and log."""

    @property
    def retention(self) -> RetentionRepository:
        """The retention policies, holds and log."""
        ...


class ArtifactStore(Protocol):
    """Where runs keep artifacts (files, blobs), addressed by key."""

    def delete_prefix(self, prefix: str) -> int:
        """Delete every artifact whose key starts with ``prefix``; return how many."""
        ...

    def delete(self, keys: Sequence[str]) -> int:
        """Delete these artifacts where they exist; return how many were deleted."""
        ...


class EvidenceEraser(Protocol):
    """Deletes economic evidence events of a run by join key (the evidence area)."""

    def erase_join_keys(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete the tenant's events with these join keys or this run id; return how many."""
        ...


class RetentionUnit(
    Transaction, WithRetention, WithRuns, WithApprovals, WithAudit, WithTasks, Protocol
):
    """What purges and erasures touch: retention, runs, approvals, audit, external tasks."""


__all__ = [
    "ArtifactStore",
    "EvidenceEraser",
    "RetentionRepository",
    "RetentionUnit",
    "WithRetention",
]
