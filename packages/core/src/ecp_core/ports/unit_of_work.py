"""The whole unit of work a storage adapter implements: every area's unit in one transaction."""

from collections.abc import Callable
from typing import Protocol

from ecp_core.ports.accounts import AccountsUnit
from ecp_core.ports.api_keys import ApiKeysUnit
from ecp_core.ports.attestations import AttestationsUnit
from ecp_core.ports.backtests import BacktestsUnit
from ecp_core.ports.billing import BillingUnit
from ecp_core.ports.certification import CertificationUnit
from ecp_core.ports.connectors import ConnectorsUnit
from ecp_core.ports.contracts import ContractsUnit
from ecp_core.ports.debugger import DebuggerUnit, EvidenceTallies
from ecp_core.ports.decisions import DecisionsUnit, VersionEvidence
from ecp_core.ports.entitlements import EntitlementsUnit
from ecp_core.ports.evidence import EvidenceStore, EvidenceUnit
from ecp_core.ports.reconciliation import ProviderEvents, ReconciliationUnit
from ecp_core.ports.registry import RegistryUnit
from ecp_core.ports.retention import RetentionUnit
from ecp_core.ports.rollouts import RolloutsUnit
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.tasks import TasksUnit
from ecp_core.ports.templates import TemplatesUnit
from ecp_core.ports.transparency import TransparencyUnit
from ecp_core.ports.webhooks import WebhooksUnit


class EvidenceRepository(EvidenceStore, EvidenceTallies, ProviderEvents, VersionEvidence, Protocol):
    """The stored evidence: its writes and every consumer's reads."""


class UnitOfWork(
    RegistryUnit,
    ContractsUnit,
    ApiKeysUnit,
    RunsUnit,
    WebhooksUnit,
    TasksUnit,
    RetentionUnit,
    EvidenceUnit,
    DebuggerUnit,
    ReconciliationUnit,
    DecisionsUnit,
    BillingUnit,
    EntitlementsUnit,
    AccountsUnit,
    BacktestsUnit,
    ConnectorsUnit,
    TemplatesUnit,
    AttestationsUnit,
    CertificationUnit,
    TransparencyUnit,
    RolloutsUnit,
    Protocol,
):
    """One transaction over every storage port. Leaving without ``commit`` rolls back."""

    @property
    def evidence(self) -> EvidenceRepository:
        """The stored evidence."""
        ...


UnitOfWorkFactory = Callable[[], UnitOfWork]
"""Makes a fresh unit of work per use case."""

__all__ = ["EvidenceRepository", "UnitOfWork", "UnitOfWorkFactory"]
