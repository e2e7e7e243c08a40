"""The graph port: immutable graph versions per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ecp_core.graphs.definition import GraphVersion


class GraphRepository(Protocol):
    """Immutable graph versions per tenant."""

    def add(self, version: GraphVersion) -> None:
        """Store a new version (Conflict when that version number exists)."""
        ...

    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        ...

    def latest(self, tenant_id: str, graph_id: str) -> GraphVersion | None:
        """The highest version, or None."""
        ...

    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[GraphVersion]:
        """The latest version of up to ``limit`` graphs, by graph id, after ``after`` when given."""
        ...

    def versions_page(
        self, tenant_id: str, graph_id: str, *, limit: int, after: int | None = None
    ) -> list[GraphVersion]:
        """Up to ``limit`` versions of a graph, oldest first, after version ``after`` when given."""
        ...

    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this content digest, or None."""
        ...


class WithGraphs(Protocol):
    """A unit of work that reaches the graph versions."""

    @property
    def graphs(self) -> GraphRepository:
        """The graph versions."""
        ...


__all__ = ["GraphRepository", "WithGraphs"]
