"""The in-memory store and its unit of work, over one module per storage area."""

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Self

from ecp_core.memory.accounts import MemoryIdentityBindings
from ecp_core.memory.api_keys import MemoryApiKeys
from ecp_core.memory.approvals import MemoryApprovals
from ecp_core.memory.attestations import MemoryAttestations
from ecp_core.memory.audit import MemoryAudit
from ecp_core.memory.backtests import MemoryBacktests
from ecp_core.memory.billing import MemoryMerchantEvents, MemorySubscriptions
from ecp_core.memory.certification import MemoryCertifications
from ecp_core.memory.connectors import MemoryConnectorCosts, MemoryConnectors
from ecp_core.memory.contracts import MemoryContracts
from ecp_core.memory.debugger import MemoryEvidenceTallies
from ecp_core.memory.decisions import MemoryDecisions, MemoryVersionEvidence
from ecp_core.memory.deployments import MemoryDeployments
from ecp_core.memory.entitlements import MemoryMeters
from ecp_core.memory.evidence import MemoryEvidenceStore
from ecp_core.memory.graphs import MemoryGraphs
from ecp_core.memory.policies import MemoryPolicies
from ecp_core.memory.reconciliation import MemoryProviderEvents, MemoryReconciliation
from ecp_core.memory.retention import MemoryRetention
from ecp_core.memory.rollouts import MemoryRollouts
from ecp_core.memory.runs import MemoryRuns
from ecp_core.memory.tables import Tables
from ecp_core.memory.tasks import MemoryTasks
from ecp_core.memory.templates import MemoryTemplates
from ecp_core.memory.transparency import MemoryTransparency
from ecp_core.memory.webhooks import MemoryWebhooks
from ecp_core.retention.model import SYSTEM_POLICY

if TYPE_CHECKING:
    from collections.abc import Callable


class MemoryEvidence(
    MemoryEvidenceStore, MemoryEvidenceTallies, MemoryProviderEvents, MemoryVersionEvidence
):
    """EvidenceRepository in memory: the store's writes and each consumer's reads, one object."""


class MemoryStore:
    """Everything the in-memory adapters hold; hand :meth:`unit_of_work` to the services."""

    def __init__(self) -> None:
        """Start empty but for the system retention row, as the Postgres migration seeds it."""
        self.tables = Tables()
        self.lock = threading.RLock()
        self.tables.put("retention_policies", SYSTEM_POLICY.tenant_id, SYSTEM_POLICY)

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
        self.tasks = MemoryTasks(tables)
        self.api_keys = MemoryApiKeys(tables)
        self.evidence = MemoryEvidence(tables)
        self.reconciliation = MemoryReconciliation(tables)
        self.decisions = MemoryDecisions(tables)
        self.backtests = MemoryBacktests(tables)
        self.connectors = MemoryConnectors(tables)
        self.connector_costs = MemoryConnectorCosts(tables)
        self.templates = MemoryTemplates(tables)
        self.rollouts = MemoryRollouts(tables)
        self.transparency = MemoryTransparency(tables)
        self.subscriptions = MemorySubscriptions(tables)
        self.meters = MemoryMeters(tables)
        self.identity_bindings = MemoryIdentityBindings(tables)
        self.merchant_events = MemoryMerchantEvents(tables)
        self.attestations = MemoryAttestations(tables)
        self.certifications = MemoryCertifications(tables)
        self._undo: list[Callable[[], None]] = []
        self._outer_undo: list[Callable[[], None]] | None = None

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
