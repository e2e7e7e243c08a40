"""TransparencyRepository in memory."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import attrs

from ecp_core.errors import Conflict
from ecp_core.memory.tables import Repository, detached
from ecp_core.transparency.model import LoggedLeaf, LogHead, PendingLeaf
from ecp_core.transparency.tiles import TileKey


def queue_leaf(repository: Repository, tenant_id: str, leaf: PendingLeaf) -> None:
    """Queue an appended audit record as a pending leaf (the audit store calls this)."""
    repository._t.append("log_pending", tenant_id, leaf)  # noqa: SLF001 - the store's own tables


class MemoryTransparency(Repository):
    """Pending leaves per tenant (a list, oldest first), tiles, logged leaves and heads.

    The store's lock serialises units of work, so :meth:`lock` always succeeds.
    """

    def tenants_pending(self, limit: int) -> list[str]:
        """Tenants with pending leaves."""
        pending = self._t.table("log_pending")
        return sorted(tenant for tenant, leaves in pending.items() if leaves)[:limit]

    def lock(self, tenant_id: str, *, wait: bool = False) -> bool:  # noqa: ARG002 - one at a time
        """Always True: the store's lock is held."""
        return True

    @detached
    def pending(self, tenant_id: str, limit: int) -> list[PendingLeaf]:
        """The oldest pending leaves."""
        leaves: list[PendingLeaf] = self._t.table("log_pending").get(tenant_id, [])
        return leaves[:limit]

    @detached
    def head(self, tenant_id: str) -> LogHead | None:
        """The newest head."""
        size = self._t.table("log_head").get(tenant_id)
        return None if size is None else self._t.table("log_heads")[(tenant_id, size)]

    @detached
    def head_at(self, tenant_id: str, size: int) -> LogHead | None:
        """The head of this size."""
        found: LogHead | None = self._t.table("log_heads").get((tenant_id, size))
        return found

    def tiles(self, tenant_id: str, keys: Iterable[TileKey]) -> dict[TileKey, bytes]:
        """Stored tiles among ``keys``."""
        stored = self._t.table("log_tiles")
        return {key: stored[(tenant_id, *key)] for key in keys if (tenant_id, *key) in stored}

    def append(
        self,
        tenant_id: str,
        start: int,
        leaves: Sequence[PendingLeaf],
        tiles: Mapping[TileKey, bytes],
        head: LogHead,
    ) -> None:
        """Log the leaves, store the tiles and the head, drop the leaves from the queue."""
        current = self._t.table("log_head").get(tenant_id, 0)
        if start != current:
            raise Conflict(f"the log of {tenant_id} has {current} leaves, not {start}")
        for offset, leaf in enumerate(leaves):
            logged = LoggedLeaf(leaf.audit_id, start + offset, leaf.record_digest)
            self._t.put("log_leaves", (tenant_id, leaf.audit_id), logged)
        for key, tile in tiles.items():
            self._t.put("log_tiles", (tenant_id, *key), tile)
        self._t.put("log_heads", (tenant_id, head.size), head)
        self._t.put("log_head", tenant_id, head.size)
        taken = {leaf.audit_id for leaf in leaves}
        queued = self._t.table("log_pending").get(tenant_id, [])
        self._t.put("log_pending", tenant_id, [p for p in queued if p.audit_id not in taken])

    @detached
    def leaves_between(self, tenant_id: str, start: int, end: int) -> list[LoggedLeaf]:
        """Logged leaves in the index range."""
        found = [
            leaf
            for (tenant, _), leaf in self._t.table("log_leaves").items()
            if tenant == tenant_id and start <= leaf.leaf_index < end
        ]
        return sorted(found, key=lambda leaf: leaf.leaf_index)

    @detached
    def head_before(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The newest head signed at or before the instant."""
        heads = [h for h in self._heads(tenant_id) if h.created_at <= instant]
        return max(heads, key=lambda h: h.size, default=None)

    @detached
    def head_after(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The oldest head signed at or after the instant."""
        heads = [h for h in self._heads(tenant_id) if h.created_at >= instant]
        return min(heads, key=lambda h: h.size, default=None)

    def _heads(self, tenant_id: str) -> list[LogHead]:
        return [h for (tenant, _), h in self._t.table("log_heads").items() if tenant == tenant_id]

    def cosign(self, tenant_id: str, size: int, note: str) -> None:
        """The head's note, cosigned."""
        head = self._t.table("log_heads").get((tenant_id, size))
        if head is not None:
            self._t.put("log_heads", (tenant_id, size), attrs.evolve(head, note=note))

    @detached
    def leaves(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, LoggedLeaf]:
        """Logged leaves of these records."""
        logged = self._t.table("log_leaves")
        return {
            audit_id: logged[(tenant_id, audit_id)]
            for audit_id in audit_ids
            if (tenant_id, audit_id) in logged
        }


__all__ = ["MemoryTransparency", "queue_leaf"]
