"""Each storage adapter class is its port: a drift between them fails type-checking.

``mypy --strict`` checks this module (see the Makefile's ``lint``); pytest only imports it. Each
function below returns an adapter as the port it implements, so a method whose signature no
longer matches its port's is a type error here, for memory and for PostgreSQL alike.
"""

import pytest

from ecp_core.memory.api_keys import MemoryApiKeys
from ecp_core.memory.approvals import MemoryApprovals
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.memory.audit import MemoryAudit
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
from ecp_core.memory.runs import MemoryRuns
from ecp_core.memory.store import MemoryEvidence, MemoryStore, MemoryUnitOfWork
from ecp_core.memory.tasks import MemoryTasks
from ecp_core.memory.webhooks import MemoryWebhooks
from ecp_core.ports.api_keys import ApiKeyRepository
from ecp_core.ports.approvals import ApprovalRepository
from ecp_core.ports.audit import AuditRepository
from ecp_core.ports.contracts import ContractRepository
from ecp_core.ports.debugger import EvidenceTallies
from ecp_core.ports.decisions import DecisionRepository, VersionEvidence
from ecp_core.ports.deployments import DeploymentRepository
from ecp_core.ports.entitlements import MeterRepository
from ecp_core.ports.evidence import EvidenceStore
from ecp_core.ports.graphs import GraphRepository
from ecp_core.ports.policies import PolicyRepository
from ecp_core.ports.reconciliation import ProviderEvents, ReconciliationRepository
from ecp_core.ports.retention import ArtifactStore, RetentionRepository
from ecp_core.ports.runs import RunRepository
from ecp_core.ports.shared import SharedTransaction, SharedTransactions
from ecp_core.ports.tasks import TaskRepository
from ecp_core.ports.unit_of_work import EvidenceRepository, UnitOfWork, UnitOfWorkFactory
from ecp_core.ports.webhooks import WebhookRepository
from ecp_http.server.observability.observed_shared import ObservedSharedTransaction
from ecp_postgres.api_keys import PostgresApiKeys
from ecp_postgres.approvals import PostgresApprovals
from ecp_postgres.audit import PostgresAudit
from ecp_postgres.contracts import PostgresContracts
from ecp_postgres.database import PostgresStore
from ecp_postgres.debugger import PostgresEvidenceTallies
from ecp_postgres.decisions import PostgresDecisions, PostgresVersionEvidence
from ecp_postgres.deployments import PostgresDeployments
from ecp_postgres.entitlements import PostgresMeters
from ecp_postgres.evidence import PostgresEvidenceStore
from ecp_postgres.graphs import PostgresGraphs
from ecp_postgres.policies import PostgresPolicies
from ecp_postgres.reconciliation import PostgresProviderEvents, PostgresReconciliation
from ecp_postgres.retention import PostgresRetention
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.tasks import PostgresTasks
from ecp_postgres.unit import PostgresEvidence, PostgresUnitOfWork
from ecp_postgres.webhooks import PostgresWebhooks

pytestmark = pytest.mark.unit

# --- in memory ----------------------------------------------------------------------------------


def memory_graphs(x: MemoryGraphs) -> GraphRepository:
    """MemoryGraphs is a GraphRepository."""
    return x


def memory_deployments(x: MemoryDeployments) -> DeploymentRepository:
    """MemoryDeployments is a DeploymentRepository."""
    return x


def memory_policies(x: MemoryPolicies) -> PolicyRepository:
    """MemoryPolicies is a PolicyRepository."""
    return x


def memory_contracts(x: MemoryContracts) -> ContractRepository:
    """MemoryContracts is a ContractRepository."""
    return x


def memory_api_keys(x: MemoryApiKeys) -> ApiKeyRepository:
    """MemoryApiKeys is an ApiKeyRepository."""
    return x


def memory_runs(x: MemoryRuns) -> RunRepository:
    """MemoryRuns is a RunRepository."""
    return x


def memory_approvals(x: MemoryApprovals) -> ApprovalRepository:
    """MemoryApprovals is an ApprovalRepository."""
    return x


def memory_audit(x: MemoryAudit) -> AuditRepository:
    """MemoryAudit is an AuditRepository."""
    return x


def memory_webhooks(x: MemoryWebhooks) -> WebhookRepository:
    """MemoryWebhooks is a WebhookRepository."""
    return x


def memory_tasks(x: MemoryTasks) -> TaskRepository:
    """MemoryTasks is a TaskRepository."""
    return x


def memory_retention(x: MemoryRetention) -> RetentionRepository:
    """MemoryRetention is a RetentionRepository."""
    return x


def memory_artifacts(x: MemoryArtifacts) -> ArtifactStore:
    """MemoryArtifacts is an ArtifactStore."""
    return x


def memory_evidence_store(x: MemoryEvidenceStore) -> EvidenceStore:
    """MemoryEvidenceStore is an EvidenceStore."""
    return x


def memory_evidence_tallies(x: MemoryEvidenceTallies) -> EvidenceTallies:
    """MemoryEvidenceTallies is the debugger's EvidenceTallies."""
    return x


def memory_provider_events(x: MemoryProviderEvents) -> ProviderEvents:
    """MemoryProviderEvents is reconciliation's ProviderEvents."""
    return x


def memory_version_evidence(x: MemoryVersionEvidence) -> VersionEvidence:
    """MemoryVersionEvidence is the decisions' VersionEvidence."""
    return x


def memory_evidence(x: MemoryEvidence) -> EvidenceRepository:
    """MemoryEvidence is the whole EvidenceRepository."""
    return x


def memory_reconciliation(x: MemoryReconciliation) -> ReconciliationRepository:
    """MemoryReconciliation is a ReconciliationRepository."""
    return x


def memory_decisions(x: MemoryDecisions) -> DecisionRepository:
    """MemoryDecisions is a DecisionRepository."""
    return x


def memory_meters(x: MemoryMeters) -> MeterRepository:
    """MemoryMeters is a MeterRepository."""
    return x


def memory_unit_of_work(x: MemoryUnitOfWork) -> UnitOfWork:
    """MemoryUnitOfWork is the whole UnitOfWork."""
    return x


def memory_factory(x: MemoryStore) -> UnitOfWorkFactory:
    """A MemoryStore's ``unit_of_work`` is a UnitOfWorkFactory."""
    return x.unit_of_work


# --- on PostgreSQL ------------------------------------------------------------------------------


def postgres_graphs(x: PostgresGraphs) -> GraphRepository:
    """PostgresGraphs is a GraphRepository."""
    return x


def postgres_deployments(x: PostgresDeployments) -> DeploymentRepository:
    """PostgresDeployments is a DeploymentRepository."""
    return x


def postgres_policies(x: PostgresPolicies) -> PolicyRepository:
    """PostgresPolicies is a PolicyRepository."""
    return x


def postgres_contracts(x: PostgresContracts) -> ContractRepository:
    """PostgresContracts is a ContractRepository."""
    return x


def postgres_api_keys(x: PostgresApiKeys) -> ApiKeyRepository:
    """PostgresApiKeys is an ApiKeyRepository."""
    return x


def postgres_runs(x: PostgresRuns) -> RunRepository:
    """PostgresRuns is a RunRepository."""
    return x


def postgres_approvals(x: PostgresApprovals) -> ApprovalRepository:
    """PostgresApprovals is an ApprovalRepository."""
    return x


def postgres_audit(x: PostgresAudit) -> AuditRepository:
    """PostgresAudit is an AuditRepository."""
    return x


def postgres_webhooks(x: PostgresWebhooks) -> WebhookRepository:
    """PostgresWebhooks is a WebhookRepository."""
    return x


def postgres_tasks(x: PostgresTasks) -> TaskRepository:
    """PostgresTasks is a TaskRepository."""
    return x


def postgres_retention(x: PostgresRetention) -> RetentionRepository:
    """PostgresRetention is a RetentionRepository."""
    return x


def postgres_evidence_store(x: PostgresEvidenceStore) -> EvidenceStore:
    """PostgresEvidenceStore is an EvidenceStore."""
    return x


def postgres_evidence_tallies(x: PostgresEvidenceTallies) -> EvidenceTallies:
    """PostgresEvidenceTallies is the debugger's EvidenceTallies."""
    return x


def postgres_provider_events(x: PostgresProviderEvents) -> ProviderEvents:
    """PostgresProviderEvents is reconciliation's ProviderEvents."""
    return x


def postgres_version_evidence(x: PostgresVersionEvidence) -> VersionEvidence:
    """PostgresVersionEvidence is the decisions' VersionEvidence."""
    return x


def postgres_evidence(x: PostgresEvidence) -> EvidenceRepository:
    """PostgresEvidence is the whole EvidenceRepository."""
    return x


def postgres_reconciliation(x: PostgresReconciliation) -> ReconciliationRepository:
    """PostgresReconciliation is a ReconciliationRepository."""
    return x


def postgres_decisions(x: PostgresDecisions) -> DecisionRepository:
    """PostgresDecisions is a DecisionRepository."""
    return x


def postgres_meters(x: PostgresMeters) -> MeterRepository:
    """PostgresMeters is a MeterRepository."""
    return x


def postgres_unit_of_work(x: PostgresUnitOfWork) -> UnitOfWork:
    """PostgresUnitOfWork is the whole UnitOfWork."""
    return x


def postgres_factory(x: PostgresStore) -> UnitOfWorkFactory:
    """A PostgresStore's ``unit_of_work`` is a UnitOfWorkFactory."""
    return x.unit_of_work


def shared_transactions_of_postgres(x: PostgresStore) -> SharedTransactions:
    """A PostgresStore's ``shared_transaction`` makes SharedTransactions (ADR 0102)."""
    return x.shared_transaction


def observed_shared_transaction(x: ObservedSharedTransaction) -> SharedTransaction:
    """The server's watched shared transaction is a SharedTransaction."""
    return x


def test_every_adapter_is_checked_against_its_port() -> None:
    """The checks are mypy's; at runtime every adapter class is at least importable."""
    checks = [
        value for name, value in globals().items() if name.startswith(("memory_", "postgres_"))
    ]
    assert len(checks) == 2 * 22 - 1  # every port twice; the artifact store only in memory
