"""GraphRepository in memory."""

from ecp_core.errors import exists
from ecp_core.graphs.definition import GraphVersion
from ecp_core.memory.tables import Repository, detached


class MemoryGraphs(Repository):
    """Graph versions keyed by (tenant, graph, version)."""

    def add(self, version: GraphVersion) -> None:
        """Store a new version."""
        key = (version.tenant_id, version.graph_id, version.version)
        if key in self._t.table("graphs"):
            raise exists("graph", version.ref)
        self._t.put("graphs", key, version)

    @detached
    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        found: GraphVersion | None = self._t.table("graphs").get((tenant_id, graph_id, version))
        return found

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
    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[GraphVersion]:
        """The latest version of each graph, by graph id, after ``after``."""
        graph_ids = {
            g
            for (t, g, _) in self._t.table("graphs")
            if t == tenant_id and (after is None or g > after)
        }
        return [self._versions(tenant_id, g)[-1] for g in sorted(graph_ids)[:limit]]

    @detached
    def versions_page(
        self, tenant_id: str, graph_id: str, *, limit: int, after: int | None = None
    ) -> list[GraphVersion]:
        """A graph's versions, oldest first, after version ``after``."""
        versions = self._versions(tenant_id, graph_id)
        return [v for v in versions if after is None or v.version > after][:limit]

    @detached
    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this digest, or None."""
        return next((v for v in self._versions(tenant_id, graph_id) if v.digest == digest), None)
