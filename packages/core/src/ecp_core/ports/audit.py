"""The audit port: append-only, hash-chained node-attempt records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from ecp_core.audit.record import ChainHead, NodeAuditRecord, RunChain
    from ecp_core.audit.settings import AuditSettings


class AuditRepository(Protocol):
    """Append-only audit chains, one per run."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head, held against concurrent appends until commit."""
        ...

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Add ``record`` as the new head; ChainConflict unless it extends the current head.

        A store may send the write with the unit of work's next statement or at commit and
        raise ChainConflict there when the stored head moved meanwhile (ADR 0059).
        """
        ...

    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        ...

    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id, then chain order.

        At most ``limit`` of them, after the (run_id, attempt) position ``after`` when given.
        """
        ...

    def chain_run_ids(self, tenant_id: str, deployment_ref: str) -> list[str]:
        """The runs of a deployment that have audit records, in code-point order."""
        ...

    def chains(self, tenant_id: str, run_ids: Sequence[str]) -> list[RunChain]:
        """Each run's records and chain head, read in one snapshot and without locks.

        One chain per run id, in the order given (no records and no head when there are none).
        What verification reads: an append committed meanwhile is wholly in or wholly out.
        """
        ...

    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        ...

    def many(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, NodeAuditRecord]:
        """The tenant's records among ``audit_ids``, by id (ids not found are left out)."""
        ...

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erased record; only personal data and erasure fields may differ."""
        ...

    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Not yet erased digest_version 2 (or 3) records created before the instant, oldest first.

        Records of runs an active legal hold covers are left out.
        """
        ...

    def settings(self, tenant_id: str) -> AuditSettings | None:
        """The tenant's stored audit settings, or None (the defaults apply)."""
        ...

    def save_settings(self, settings: AuditSettings) -> None:
        """Store a tenant's audit settings, replacing any earlier ones."""
        ...


class WithAudit(Protocol):
    """A unit of work that reaches the audit records."""

    @property
    def audit(self) -> AuditRepository:
        """The audit records."""
        ...


class AuditUnit(Transaction, WithAudit, Protocol):
    """A transaction over the audit records and settings alone."""


__all__ = ["AuditRepository", "AuditUnit", "WithAudit"]
