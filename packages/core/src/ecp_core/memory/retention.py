"""RetentionRepository in memory, and which runs a legal hold keeps from selection."""

from typing import TYPE_CHECKING

from ecp_core.errors import exists, missing
from ecp_core.memory.tables import Repository, Tables, detached
from ecp_core.retention.model import SYSTEM_TENANT, LegalHold, RetentionAuditEntry, RetentionPolicy

if TYPE_CHECKING:
    from ecp_core.runs.run.model import Run


def held(tables: Tables, tenant_id: str, run_id: str) -> bool:
    """Whether an active legal hold covers the run or an ancestor (:meth:`LegalHold.covers`).

    Purge selection (``expired`` runs, ``aged`` audit records) leaves such runs out.
    """
    holds: dict[str, LegalHold] = tables.table("legal_holds")
    run: Run | None = tables.table("runs").get(run_id)
    ancestors = () if run is None else run.ancestor_run_ids
    return any(hold.covers(tenant_id, run_id, ancestors) for hold in holds.values())


class MemoryRetention(Repository):
    """Policy rows by tenant, holds by id, and each tenant's retention log."""

    @detached
    def policy(self, tenant_id: str) -> RetentionPolicy | None:
        """The stored policy row, or None."""
        found: RetentionPolicy | None = self._t.table("retention_policies").get(tenant_id)
        return found

    def put_policy(self, policy: RetentionPolicy) -> None:
        """Store a policy row."""
        self._t.put("retention_policies", policy.tenant_id, policy)

    def policy_tenants(self) -> list[str]:
        """Tenants with a policy row of their own."""
        return sorted(t for t in self._t.table("retention_policies") if t != SYSTEM_TENANT)

    def add_hold(self, hold: LegalHold) -> None:
        """Store a new hold."""
        if hold.hold_id in self._t.table("legal_holds"):
            raise exists("hold", hold.hold_id)
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
            raise missing("hold", hold.hold_id)
        self._t.put("legal_holds", hold.hold_id, hold)

    def append_log(self, entry: RetentionAuditEntry) -> None:
        """Append to the log (an entry id appears once)."""
        if entry.entry_id in self._t.table("retention_log_ids"):
            raise exists("retention log entry", entry.entry_id)
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
