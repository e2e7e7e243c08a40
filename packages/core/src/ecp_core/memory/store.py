"""The in-memory store and its unit of work."""

import copy
import threading
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from ecp_core.memory.api_keys import MemoryApiKeys
from ecp_core.memory.decisions import MemoryDecisions
from ecp_core.memory.evidence import MemoryEvidence, MemoryReconciliation
from ecp_core.memory.repositories import (
    MemoryApprovals,
    MemoryAudit,
    MemoryContracts,
    MemoryDeployments,
    MemoryGraphs,
    MemoryPolicies,
    MemoryRetention,
)
from ecp_core.memory.runs import MemoryRuns
from ecp_core.memory.webhooks import MemoryWebhooks
from ecp_core.retention.model import SYSTEM_TENANT, RetentionPolicy

_ABSENT = object()

SYSTEM_POLICY = RetentionPolicy(
    tenant_id=SYSTEM_TENANT,
    audit_ttl_seconds=None,
    run_ttl_seconds=None,
    enabled=True,
    updated_at=datetime(1970, 1, 1, tzinfo=UTC),
)
"""The seeded ``default`` row: keep audit records and runs forever."""


class Tables:
    """Named dicts plus an undo log of the writes made through :meth:`put`.

    Values are copied on the way in and out, so callers never share the stored objects.
    """

    def __init__(self) -> None:
        """Start empty."""
        self.data: dict[str, dict[Any, Any]] = {}
        self.undo: list[Callable[[], None]] | None = None

    def table(self, name: str) -> dict[Any, Any]:
        """The dict called ``name`` (created on first use)."""
        return self.data.setdefault(name, {})

    def put(self, name: str, key: Hashable, value: Any) -> None:  # noqa: ANN401
        """Write ``value`` at ``key``, remembering how to undo it."""
        table = self.table(name)
        value = copy.deepcopy(value)
        previous = table.get(key, _ABSENT)
        if self.undo is not None:
            if previous is _ABSENT:
                self.undo.append(lambda: table.pop(key, None))
            else:
                self.undo.append(lambda: table.__setitem__(key, previous))
        table[key] = value

    def remove(self, name: str, key: Hashable) -> None:
        """Remove the value at ``key`` (if any), remembering how to undo it."""
        table = self.table(name)
        if key not in table:
            return
        previous = table.pop(key)
        if self.undo is not None:
            self.undo.append(lambda: table.__setitem__(key, previous))

    def append(self, name: str, key: Hashable, value: Any) -> None:  # noqa: ANN401
        """Append ``value`` to the list at ``key``, remembering how to undo it."""
        table = self.table(name)
        items = table.setdefault(key, [])
        items.append(copy.deepcopy(value))
        if self.undo is not None:
            self.undo.append(items.pop)


class MemoryStore:
    """Everything the in-memory adapters hold; hand :meth:`unit_of_work` to the services."""

    def __init__(self) -> None:
        """Start empty but for the system retention row (keep forever), as a migration seeds it."""
        self.tables = Tables()
        self.lock = threading.RLock()
        self.tables.put("retention_policies", SYSTEM_TENANT, SYSTEM_POLICY)

    def unit_of_work(self) -> "MemoryUnitOfWork":
        """A fresh unit of work over this store (the UnitOfWorkFactory)."""
        return MemoryUnitOfWork(self)


class MemoryUnitOfWork:
    """Serializable transaction over a :class:`MemoryStore`."""

    def __init__(self, store: MemoryStore) -> None:
        """Bind to ``store``; nothing happens until entered."""
        self._store = store
        tables = store.tables
        self.graphs = MemoryGraphs(tables)
        self.deployments = MemoryDeployments(tables)
        self.policies = MemoryPolicies(tables)
        self.runs = MemoryRuns(tables)
        self.approvals = MemoryApprovals(tables)
        self.audit = MemoryAudit(tables)
        self.contracts = MemoryContracts(tables)
        self.retention = MemoryRetention(tables)
        self.webhooks = MemoryWebhooks(tables)
        self.api_keys = MemoryApiKeys(tables)
        self.evidence = MemoryEvidence(tables)
        self.reconciliation = MemoryReconciliation(tables)
        self.decisions = MemoryDecisions(tables)
        self._undo: list[Callable[[], None]] = []

    def __enter__(self) -> Self:
        """Take the store lock and start an undo log."""
        self._store.lock.acquire()
        self._outer_undo = self._store.tables.undo
        self._undo = []
        self._store.tables.undo = self._undo
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Undo uncommitted writes and release the lock."""
        try:
            self.rollback()
        finally:
            self._store.tables.undo = self._outer_undo
            self._store.lock.release()

    def commit(self) -> None:
        """Keep the writes made so far."""
        if self._outer_undo is not None:
            self._outer_undo.extend(self._undo)
        self._undo.clear()

    def rollback(self) -> None:
        """Undo the writes made since the last commit."""
        while self._undo:
            self._undo.pop()()
