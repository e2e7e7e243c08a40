"""TransparencyRepository on PostgreSQL (migration ``transparency_0001_log``)."""

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ecp_core.errors import Conflict
from ecp_core.transparency.model import LoggedLeaf, LogHead, PendingLeaf
from ecp_core.transparency.tiles import TileKey
from ecp_postgres.rows import Repository

if TYPE_CHECKING:
    import psycopg

LOCK_NAMESPACE = "ecp_log:"
"""Prefix of the advisory lock keys of tenants' logs."""
_HEAD = "SELECT tenant_id, tree_size, root, note, created_at FROM ecp_log_heads"


def _head(row: dict[str, Any] | None) -> LogHead | None:
    if row is None:
        return None
    return LogHead(
        tenant_id=row["tenant_id"],
        size=row["tree_size"],
        root=bytes(row["root"]),
        note=row["note"],
        created_at=row["created_at"],
    )


class PostgresTransparency(Repository):
    """Pending leaves queued by the audit insert trigger; leaves, tiles and heads as tables.

    One per unit of work: the queue keys of the pending leaves it read are kept, so the append
    deletes them by primary key.
    """

    def __init__(self, conn: "psycopg.Connection[dict[str, Any]]") -> None:
        """Work on ``conn`` (the unit of work's connection)."""
        super().__init__(conn)
        self._queued: set[tuple[str, str, int]] = set()

    def tenants_pending(self, limit: int) -> list[str]:
        """Tenants with pending leaves (a skip scan over the queue's index)."""
        rows = self._conn.execute(
            "WITH RECURSIVE tenants(tenant_id) AS ("
            " (SELECT tenant_id FROM ecp_log_pending ORDER BY tenant_id LIMIT 1)"
            " UNION ALL SELECT (SELECT p.tenant_id FROM ecp_log_pending p"
            "  WHERE p.tenant_id > t.tenant_id ORDER BY p.tenant_id LIMIT 1)"
            " FROM tenants t WHERE t.tenant_id IS NOT NULL)"
            " SELECT tenant_id FROM tenants WHERE tenant_id IS NOT NULL LIMIT %s",
            (limit,),
        ).fetchall()
        return [row["tenant_id"] for row in rows]

    def lock(self, tenant_id: str, *, wait: bool = False) -> bool:
        """A transaction-level advisory lock on the tenant's log, waiting only when asked."""
        key = (LOCK_NAMESPACE + json.dumps(tenant_id),)
        if wait:
            self._conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", key)
            return True
        row = self._conn.execute(
            "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0)) AS taken", key
        ).fetchone()
        return bool(row and row["taken"])

    def pending(self, tenant_id: str, limit: int) -> list[PendingLeaf]:
        """The oldest queued leaves (their queue keys kept for :meth:`append`'s delete)."""
        rows = self._conn.execute(
            "SELECT seq, audit_id, record_digest FROM ecp_log_pending WHERE tenant_id = %s"
            " ORDER BY seq LIMIT %s",
            (tenant_id, limit),
        ).fetchall()
        self._queued.update((tenant_id, row["audit_id"], row["seq"]) for row in rows)
        return [PendingLeaf(row["audit_id"], row["record_digest"]) for row in rows]

    def head(self, tenant_id: str) -> LogHead | None:
        """The newest head."""
        return _head(
            self._conn.execute(
                f"{_HEAD} WHERE tenant_id = %s ORDER BY tree_size DESC LIMIT 1", (tenant_id,)
            ).fetchone()
        )

    def head_at(self, tenant_id: str, size: int) -> LogHead | None:
        """The head of this size."""
        return _head(
            self._conn.execute(
                f"{_HEAD} WHERE tenant_id = %s AND tree_size = %s", (tenant_id, size)
            ).fetchone()
        )

    def tiles(self, tenant_id: str, keys: Iterable[TileKey]) -> dict[TileKey, bytes]:
        """The asked-for tiles that exist, in one statement."""
        wanted = list(keys)
        if not wanted:
            return {}
        rows = self._conn.execute(
            "SELECT level, tile_index, hashes FROM ecp_log_tiles WHERE tenant_id = %s"
            " AND (level, tile_index) IN (SELECT * FROM unnest(%s::smallint[], %s::bigint[]))",
            (tenant_id, [k[0] for k in wanted], [k[1] for k in wanted]),
        ).fetchall()
        return {(row["level"], row["tile_index"]): bytes(row["hashes"]) for row in rows}

    def append(
        self,
        tenant_id: str,
        start: int,
        leaves: Sequence[PendingLeaf],
        tiles: Mapping[TileKey, bytes],
        head: LogHead,
    ) -> None:
        """Insert the leaves and the head, upsert the tiles, delete the pending rows."""
        current = self.head(tenant_id)
        if start != (current.size if current else 0):
            raise Conflict(f"the log of {tenant_id} does not have {start} leaves")
        cursor = self._conn.cursor()
        cursor.execute(
            "INSERT INTO ecp_log_leaves (tenant_id, leaf_index, audit_id, record_digest)"
            " SELECT %s, %s + ordinality - 1, audit_id, record_digest"
            " FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS l(audit_id, record_digest)",
            (
                tenant_id,
                start,
                [leaf.audit_id for leaf in leaves],
                [leaf.record_digest for leaf in leaves],
            ),
        )
        cursor.execute(
            "INSERT INTO ecp_log_tiles (tenant_id, level, tile_index, hashes)"
            " SELECT %s, * FROM unnest(%s::smallint[], %s::bigint[], %s::bytea[])"
            " ON CONFLICT (tenant_id, level, tile_index) DO UPDATE SET hashes = EXCLUDED.hashes",
            (tenant_id, [k[0] for k in tiles], [k[1] for k in tiles], list(tiles.values())),
        )
        cursor.execute(
            "INSERT INTO ecp_log_heads (tenant_id, tree_size, root, note, created_at)"
            " VALUES (%s, %s, %s, %s, %s)",
            (tenant_id, head.size, head.root, head.note, head.created_at),
        )
        taken = {leaf.audit_id for leaf in leaves}
        keys = [
            seq
            for tenant, audit_id, seq in self._queued
            if tenant == tenant_id and audit_id in taken
        ]
        cursor.execute("DELETE FROM ecp_log_pending WHERE seq = ANY(%s)", (keys,))

    def cosign(self, tenant_id: str, size: int, note: str) -> None:
        """The head's note, cosigned."""
        self._conn.execute(
            "UPDATE ecp_log_heads SET note = %s WHERE tenant_id = %s AND tree_size = %s",
            (note, tenant_id, size),
        )

    def leaves_between(self, tenant_id: str, start: int, end: int) -> list[LoggedLeaf]:
        """Logged leaves in the index range (the primary key's order)."""
        rows = self._conn.execute(
            "SELECT audit_id, leaf_index, record_digest FROM ecp_log_leaves"
            " WHERE tenant_id = %s AND leaf_index >= %s AND leaf_index < %s ORDER BY leaf_index",
            (tenant_id, start, end),
        ).fetchall()
        return [LoggedLeaf(r["audit_id"], r["leaf_index"], r["record_digest"]) for r in rows]

    def head_before(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The newest head signed at or before the instant (index ecp_log_heads_by_time)."""
        return _head(
            self._conn.execute(
                f"{_HEAD} WHERE tenant_id = %s AND created_at <= %s"
                " ORDER BY created_at DESC, tree_size DESC LIMIT 1",
                (tenant_id, instant),
            ).fetchone()
        )

    def head_after(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The oldest head signed at or after the instant."""
        return _head(
            self._conn.execute(
                f"{_HEAD} WHERE tenant_id = %s AND created_at >= %s"
                " ORDER BY created_at, tree_size LIMIT 1",
                (tenant_id, instant),
            ).fetchone()
        )

    def leaves(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, LoggedLeaf]:
        """Logged leaves of these records."""
        rows = self._conn.execute(
            "SELECT audit_id, leaf_index, record_digest FROM ecp_log_leaves"
            " WHERE tenant_id = %s AND audit_id = ANY(%s)",
            (tenant_id, list(audit_ids)),
        ).fetchall()
        return {
            row["audit_id"]: LoggedLeaf(row["audit_id"], row["leaf_index"], row["record_digest"])
            for row in rows
        }


__all__ = ["PostgresTransparency"]
