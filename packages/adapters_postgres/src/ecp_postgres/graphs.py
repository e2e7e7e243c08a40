"""GraphRepository on PostgreSQL, with a cache of the immutable versions."""

import collections
import threading
from typing import Any

import psycopg

from ecp_core.errors import exists
from ecp_core.graphs.definition import GraphVersion
from ecp_postgres.rows import Repository, Table

GRAPHS = Table("ecp_graph_versions", GraphVersion, jsonb=["definition"])


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


class PostgresGraphs(Repository):
    """GraphRepository on PostgreSQL; versions are immutable, so reads by number are cached."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]], cache: GraphCache) -> None:
        """Read through ``cache``, which the store shares between units of work."""
        super().__init__(conn)
        self._cache = cache

    def add(self, version: GraphVersion) -> None:
        """Store a new version."""
        self._insert(GRAPHS, version, exists("graph", version.ref))

    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        key = (tenant_id, graph_id, version)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        found = self._one(GRAPHS, "tenant_id = %s AND graph_id = %s AND version = %s", key)
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

    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[GraphVersion]:
        """The latest version of each graph, by graph id, after ``after``."""
        # The primary key (tenant_id, graph_id COLLATE "C", version) orders and probes.
        latest = (
            "NOT EXISTS (SELECT 1 FROM ecp_graph_versions AS newer WHERE newer.tenant_id ="
            " ecp_graph_versions.tenant_id AND newer.graph_id = ecp_graph_versions.graph_id"
            " AND newer.version > ecp_graph_versions.version)"
        )
        if after is None:
            return self._all(
                GRAPHS,
                f"WHERE tenant_id = %s AND {latest} ORDER BY graph_id LIMIT %s",
                (tenant_id, limit),
            )
        return self._all(
            GRAPHS,
            f"WHERE tenant_id = %s AND graph_id > %s AND {latest} ORDER BY graph_id LIMIT %s",
            (tenant_id, after, limit),
        )

    def versions_page(
        self, tenant_id: str, graph_id: str, *, limit: int, after: int | None = None
    ) -> list[GraphVersion]:
        """A graph's versions, oldest first, after version ``after``."""
        return self._all(
            GRAPHS,
            "WHERE tenant_id = %s AND graph_id = %s AND version > %s ORDER BY version LIMIT %s",
            (tenant_id, graph_id, 0 if after is None else after, limit),
        )

    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this digest, or None."""
        return self._one(
            GRAPHS,
            "tenant_id = %s AND graph_id = %s AND digest = %s",
            (tenant_id, graph_id, digest),
        )
