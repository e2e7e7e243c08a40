"""One object that wires the core's use cases together: the embedding entry point."""

from collections.abc import Sequence

import attrs

from ecp_core.accounts.service import AccountService
from ecp_core.api_keys.service import ApiKeyService
from ecp_core.approvals.model import ApprovalResolutionRequest
from ecp_core.backtests.limits import BacktestSetup
from ecp_core.backtests.service import BacktestService
from ecp_core.billing.service import BillingService, BillingSetup
from ecp_core.catalog.service import GraphCatalog
from ecp_core.contracts.service import ContractService
from ecp_core.debugger.service import DebuggerService
from ecp_core.decisions.service import DecisionService
from ecp_core.entitlements.model import AccountUsage
from ecp_core.entitlements.service import Entitlements
from ecp_core.evidence.service import EvidenceService
from ecp_core.identity import ActorIdentity
from ecp_core.memory import MemoryStore
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.ports.retention import ArtifactStore, EvidenceEraser
from ecp_core.ports.system import Clock, IdFactory, Signer
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.service import ReconciliationService
from ecp_core.retention.erasure import RunEraser
from ecp_core.retention.model import ConfiguredDefaults
from ecp_core.retention.service import RetentionService
from ecp_core.runs.actions import ActionRegistry
from ecp_core.runs.approvals import ApprovalService
from ecp_core.runs.audit_reads import AuditService
from ecp_core.runs.audit_writer import AuditWriter
from ecp_core.runs.dispatch import DISPATCH_RETRY
from ecp_core.runs.lifecycle import RunLifecycle
from ecp_core.runs.model import ApprovalResolutionResponse, RunStatusResponse
from ecp_core.runs.resolution import ApprovalSteps
from ecp_core.runs.service import RunService
from ecp_core.runs.step import Stepper
from ecp_core.runs.task_steps import TaskSteps
from ecp_core.runs.tasks import TaskWork
from ecp_core.signing import Ed25519Signer, PublicSigningKey
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.webhooks.schedule import RetrySchedule
from ecp_core.webhooks.service import WebhookService


@attrs.frozen(kw_only=True)
class RetentionSettings:
    """How erasure reaches beyond the database: artifacts, economic evidence, default TTLs.

    ``evidence`` None erases economic events from the same store (the evidence area);
    ``econ_erase_enabled`` False skips that step and logs ``econ_erase_skipped``.
    """

    artifacts: ArtifactStore = attrs.field(factory=MemoryArtifacts)
    evidence: EvidenceEraser | None = None
    econ_erase_enabled: bool = False
    defaults: ConfiguredDefaults = attrs.field(factory=ConfiguredDefaults)


@attrs.frozen(kw_only=True)
class Ecp:
    """The core's services over one storage (a UnitOfWorkFactory) and one signing key."""

    graphs: GraphCatalog
    contracts: ContractService
    runs: RunService
    approvals: ApprovalService
    tasks: TaskWork
    audit: AuditService
    actions: ActionRegistry
    api_keys: ApiKeyService
    retention: RetentionService
    webhooks: WebhookService
    evidence: EvidenceService
    debugger: DebuggerService
    reconciliation: ReconciliationService
    decisions: DecisionService
    backtests: BacktestService
    """Bounded model backtests (replays off the request; ``run_queued`` is the worker's sweep)."""
    accounts: AccountService
    """Hosted logins: identity provider organizations bound to tenants, activated once."""
    billing: BillingService | None = None
    """Merchant events, checkout and portal; None unless a merchant is configured."""
    entitlements: Entitlements | None = None
    """The plans' quotas on the meters; None unless enforcement is enabled (self-hosting)."""
    quotas: Entitlements | None = None
    """Reads of plans and meters for the account page, whether enforcement is on or not."""

    @classmethod
    def build(
        cls,
        uow: UnitOfWorkFactory,
        *,
        signer: Signer | None,
        clock: Clock | None = None,
        ids: IdFactory | None = None,
        actions: ActionRegistry | None = None,
        refuse_unknown_actions: bool = False,
        verification_keys: Sequence[PublicSigningKey] = (),
        retention: RetentionSettings | None = None,
        webhook_retry: RetrySchedule | None = None,
        dispatch_retry: RetrySchedule | None = None,
        billing: BillingSetup | None = None,
        entitlements_enabled: bool = False,
        backtests: BacktestSetup | None = None,
    ) -> "Ecp":
        """Wire every service.

        ``verification_keys`` adds retired keys to the signer's own; ``retention`` says where
        artifacts live, whether economic events are erased, and the configured default TTLs;
        ``dispatch_retry`` how often and how far apart a failing run dispatch is retried;
        ``refuse_unknown_actions`` makes registering a graph whose action nodes name an action
        not (yet) in ``actions`` fail with ``unknown_action`` (the server always sets it);
        ``billing`` (the merchant and the Solo price) enables the billing service;
        ``entitlements_enabled`` enforces the plans' quotas on ingestion, scans and schedules;
        ``backtests`` (the model provider, digest keys, limits) lets backtests run.
        """
        clock = clock or SystemClock()
        ids = ids or UuidV7Factory()
        actions = actions or ActionRegistry()
        webhooks = WebhookService(uow, clock, ids, webhook_retry or RetrySchedule())
        stepper = Stepper(clock, ids, actions)
        lifecycle = RunLifecycle(AuditWriter(clock, ids, signer), webhooks)
        keys = [*verification_keys, *([signer.published()] if signer is not None else [])]
        retention = retention or RetentionSettings()
        quotas = Entitlements(uow, clock)
        entitlements = quotas if entitlements_enabled else None
        evidence = EvidenceService(uow, clock, entitlements)
        eraser = RunEraser(
            uow,
            clock,
            ids,
            retention.artifacts,
            retention.evidence or evidence,
            econ_erase_enabled=retention.econ_erase_enabled,
        )
        return cls(
            graphs=GraphCatalog(
                uow, clock, ids, known_actions=actions.names() if refuse_unknown_actions else None
            ),
            contracts=ContractService(uow, clock),
            runs=RunService(
                uow, clock, ids, stepper, lifecycle, dispatch=dispatch_retry or DISPATCH_RETRY
            ),
            approvals=ApprovalService(uow, clock, ApprovalSteps(stepper, clock), lifecycle),
            tasks=TaskWork(uow, clock, TaskSteps(stepper, clock), lifecycle),
            audit=AuditService(uow, keys),
            actions=actions,
            api_keys=ApiKeyService(uow, clock),
            webhooks=webhooks,
            retention=RetentionService(uow, clock, ids, eraser, retention.defaults),
            evidence=evidence,
            debugger=DebuggerService(uow, clock),
            reconciliation=ReconciliationService(uow, clock),
            decisions=DecisionService(uow, clock, ids, entitlements),
            backtests=BacktestService(uow, clock, ids, backtests, entitlements),
            accounts=AccountService(uow, clock, ids),
            billing=None if billing is None else BillingService(uow, clock, billing),
            entitlements=entitlements,
            quotas=quotas,
        )

    @classmethod
    def in_memory(cls, *, signer: Ed25519Signer | None = None, **options: object) -> "Ecp":
        """Everything in memory, signed with ``signer`` (a fresh key when omitted)."""
        store = MemoryStore()
        return cls.build(store.unit_of_work, signer=signer or Ed25519Signer.generate(), **options)  # type: ignore[arg-type]

    def account_usage(self, tenant_id: str) -> AccountUsage | None:
        """The tenant's plan, state, period and meter usage (the account page), enforced or not.

        None when the tenant has no subscription.
        """
        if self.quotas is None:
            return None
        live = len(self.decisions.schedules(tenant_id))
        return self.quotas.usage(tenant_id, live_schedules=live)

    def resolve(
        self,
        actor: ActorIdentity,
        deployment_ref: str,
        approval_id: str,
        request: ApprovalResolutionRequest,
    ) -> ApprovalResolutionResponse:
        """Resolve an approval and continue the run until it waits or ends."""
        approval, run = self.approvals.resolve(actor, deployment_ref, approval_id, request)
        run = self.runs.drive(run.tenant_id, run.run_id)
        return ApprovalResolutionResponse(approval=approval, run=RunStatusResponse.of(run))
