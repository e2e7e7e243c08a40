"""ECP's testing kit: a conformance suite per storage port, and shared Hypothesis strategies.

Test your own adapter by subclassing the suites and overriding the fixture they ask for::

    from ecp_core.testing import RunRepositoryConformance

    class TestMyRuns(RunRepositoryConformance):
        @pytest.fixture
        def uow(self):
            return MyStore().unit_of_work

Property-test your own graphs and policies with :mod:`ecp_core.testing.strategies` and
``ecp_core.Ecp.in_memory()``. See docs/testing.md.
"""

from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.conformance.accounts import ActivationConformance, IdentityBindingConformance
from ecp_core.testing.conformance.api_keys import ApiKeyRepositoryConformance
from ecp_core.testing.conformance.approvals import (
    ApprovalInboxProperties,
    ApprovalRepositoryConformance,
)
from ecp_core.testing.conformance.audit import AuditRepositoryConformance
from ecp_core.testing.conformance.backtests import BacktestRepositoryConformance
from ecp_core.testing.conformance.billing import (
    MerchantEventRepositoryConformance,
    SubscriptionRepositoryConformance,
)
from ecp_core.testing.conformance.decisions import (
    DecisionRepositoryConformance,
    DecisionsMatchReference,
)
from ecp_core.testing.conformance.dispatch import DispatchClaimConformance, DispatchClaimProperties
from ecp_core.testing.conformance.entitlements import (
    MeterRepositoryConformance,
    ReservationConformance,
)
from ecp_core.testing.conformance.evidence import (
    EvidenceMatchesReference,
    EvidenceRepositoryConformance,
)
from ecp_core.testing.conformance.graphs import (
    DeploymentRepositoryConformance,
    GraphRepositoryConformance,
    PolicyRepositoryConformance,
)
from ecp_core.testing.conformance.reconciliation import (
    ReconciliationMatchesReference,
    StatementRepositoryConformance,
)
from ecp_core.testing.conformance.retention import RetentionRepositoryConformance
from ecp_core.testing.conformance.run_search import RunSearchProperties
from ecp_core.testing.conformance.runs import RunRepositoryConformance
from ecp_core.testing.conformance.tasks import (
    TaskExpiryConformance,
    TaskQueueProperties,
    TaskRepositoryConformance,
)
from ecp_core.testing.conformance.timers import TimerConformance
from ecp_core.testing.conformance.unit_of_work import (
    AttemptAtomicityConformance,
    UnitOfWorkConformance,
)
from ecp_core.testing.conformance.webhooks import WebhookRepositoryConformance

STORE_SUITES = (
    UnitOfWorkConformance,
    AttemptAtomicityConformance,
    GraphRepositoryConformance,
    DeploymentRepositoryConformance,
    PolicyRepositoryConformance,
    ApiKeyRepositoryConformance,
    AuditRepositoryConformance,
    RunRepositoryConformance,
    DispatchClaimConformance,
    TimerConformance,
    ApprovalRepositoryConformance,
    WebhookRepositoryConformance,
    TaskRepositoryConformance,
    RetentionRepositoryConformance,
    EvidenceRepositoryConformance,
    StatementRepositoryConformance,
    DecisionRepositoryConformance,
    SubscriptionRepositoryConformance,
    MerchantEventRepositoryConformance,
    MeterRepositoryConformance,
    ReservationConformance,
    IdentityBindingConformance,
    ActivationConformance,
    BacktestRepositoryConformance,
)
"""Every suite that asks for ``uow``: a whole storage adapter passes all of them."""

EXAMPLE_SUITES = (
    ApprovalInboxProperties,
    DispatchClaimProperties,
    EvidenceMatchesReference,
    ReconciliationMatchesReference,
    DecisionsMatchReference,
    TaskQueueProperties,
    RunSearchProperties,
)
"""Every property suite that asks for ``open_store``."""

__all__ = [
    "EXAMPLE_SUITES",
    "STORE_SUITES",
    "ActivationConformance",
    "ApiKeyRepositoryConformance",
    "ApprovalInboxProperties",
    "ApprovalRepositoryConformance",
    "AttemptAtomicityConformance",
    "AuditRepositoryConformance",
    "BacktestRepositoryConformance",
    "DecisionRepositoryConformance",
    "DecisionsMatchReference",
    "DeploymentRepositoryConformance",
    "DispatchClaimConformance",
    "DispatchClaimProperties",
    "EvidenceMatchesReference",
    "EvidenceRepositoryConformance",
    "ExampleStoreSuite",
    "GraphRepositoryConformance",
    "IdentityBindingConformance",
    "MerchantEventRepositoryConformance",
    "MeterRepositoryConformance",
    "PolicyRepositoryConformance",
    "ReconciliationMatchesReference",
    "ReservationConformance",
    "RetentionRepositoryConformance",
    "RunRepositoryConformance",
    "RunSearchProperties",
    "StatementRepositoryConformance",
    "StoreOpener",
    "StoreSuite",
    "SubscriptionRepositoryConformance",
    "TaskExpiryConformance",
    "TaskQueueProperties",
    "TaskRepositoryConformance",
    "TimerConformance",
    "UnitOfWorkConformance",
    "WebhookRepositoryConformance",
]
