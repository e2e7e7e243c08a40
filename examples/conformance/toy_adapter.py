"""A toy storage adapter: graph versions in a plain dict, everything else in ecp_core.memory.

It shows the shape a storage adapter has: a store, and a unit of work per use case that is one
transaction over every repository. Only ``graphs`` is the toy's own.
"""

from types import TracebackType
from typing import Any, Self

from ecp_core.errors import Conflict
from ecp_core.graphs import GraphVersion
from ecp_core.memory import MemoryStore, MemoryUnitOfWork

Key = tuple[str, str, int]  # tenant, graph, version


class DictGraphs:
    """``GraphRepository`` over a dict: reads see this unit's writes, commit publishes them."""

    def __init__(self, committed: dict[Key, GraphVersion]) -> None:
        self._committed = committed
        self._pending: dict[Key, GraphVersion] = {}

    def _all(self) -> dict[Key, GraphVersion]:
        return self._committed | self._pending

    def add(self, version: GraphVersion) -> None:
        key = (version.tenant_id, version.graph_id, version.version)
        if key in self._all():
            raise Conflict(f"graph version {version.graph_id}@{version.version} exists")
        self._pending[key] = version

    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        return self._all().get((tenant_id, graph_id, version))

    def latest(self, tenant_id: str, graph_id: str) -> GraphVersion | None:
        mine = [v for (t, g, _), v in self._all().items() if (t, g) == (tenant_id, graph_id)]
        return max(mine, key=lambda v: v.version, default=None)

    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[GraphVersion]:
        graph_ids = sorted(
            {g for (t, g, _) in self._all() if t == tenant_id and (after is None or g > after)}
        )
        found = (self.latest(tenant_id, g) for g in graph_ids[:limit])
        return [v for v in found if v is not None]

    def versions_page(
        self, tenant_id: str, graph_id: str, *, limit: int, after: int | None = None
    ) -> list[GraphVersion]:
        mine = sorted(
            (v for (t, g, _), v in self._all().items() if (t, g) == (tenant_id, graph_id)),
            key=lambda v: v.version,
        )
        return [v for v in mine if after is None or v.version > after][:limit]

    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        return next(
            (
                v
                for (t, g, _), v in sorted(self._all().items())
                if (t, g) == (tenant_id, graph_id) and v.digest == digest
            ),
            None,
        )

    def commit(self) -> None:
        self._committed.update(self._pending)
        self._pending.clear()

    def rollback(self) -> None:
        self._pending.clear()


class ToyUnitOfWork:
    """One transaction: the toy's graphs plus every other repository of the memory store."""

    def __init__(self, inner: MemoryUnitOfWork, graphs: DictGraphs) -> None:
        self._inner = inner
        self.graphs = graphs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        self._inner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.graphs.rollback()  # what was not committed is dropped
        self._inner.__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        self._inner.commit()
        self.graphs.commit()

    def rollback(self) -> None:
        self._inner.rollback()
        self.graphs.rollback()


class ToyStore:
    """The toy adapter's store."""

    def __init__(self) -> None:
        self._memory = MemoryStore()
        self._graphs: dict[Key, GraphVersion] = {}

    def unit_of_work(self) -> ToyUnitOfWork:
        """A fresh unit of work (a ``UnitOfWorkFactory`` is this bound method)."""
        return ToyUnitOfWork(self._memory.unit_of_work(), DictGraphs(self._graphs))
