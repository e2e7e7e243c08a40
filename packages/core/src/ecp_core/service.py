"""One object that wires the core's use cases together: the embedding entry point."""

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs

from ecp_core.accounts.service import AccountService
from ecp_core.api_keys.service import ApiKeyService
from ecp_core.attestations.service import AttestationService
from ecp_core.audit.service import AuditSettingsService
from ecp_core.backtests.limits import BacktestSetup
from ecp_core.backtests.service import BacktestService
from ecp_core.billing.service import BillingService, BillingSetup
from ecp_core.certification.service import CertificationService
from ecp_core.certification_facts import DeploymentFacts
from ecp_core.connectors.abandoned import AbandonedReservations
from ecp_core.connectors.service import ConnectorService, ConnectorSetup
from ecp_core.connectors.trials import ConnectorTrials
from ecp_core.contracts.service import ContractService
from ecp_core.debugger.service import DebuggerService
from ecp_core.decisions.service import DecisionService
from ecp_core.entitlements.model import AccountUsage
from ecp_core.entitlements.service import Entitlements
from ecp_core.evidence.model import ExecutionEvent, IngestResult
from ecp_core.evidence.service import EvidenceService
from ecp_core.identity import ActorIdentity
from ecp_core.memory import MemoryStore
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.ports.retention import ArtifactStore, EvidenceEraser
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.shared import SharedTransactions
from ecp_core.ports.system import Clock, IdFactory, Signer
from ecp_core.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ecp_core.reconciliation.service import ReconciliationService
from ecp_core.registry.service import GraphRegistry
from ecp_core.retention.erasure import RunEraser
from ecp_core.retention.model import ConfiguredDefaults
from ecp_core.retention.service import RetentionService
from ecp_core.rollouts.service import RolloutService, new_rollout_key
from ecp_core.runs.approvals.model import ApprovalResolutionRequest, ApprovalResolutionResponse
from ecp_core.runs.approvals.service import ApprovalService
from ecp_core.runs.approvals.steps import ApprovalSteps
from ecp_core.runs.audit.bundle import AuditBundles
from ecp_core.runs.audit.export import AuditExports
from ecp_core.runs.audit.readiness import AuditReadiness, DeploymentMode
from ecp_core.runs.audit.trail import VERIFY_CONNECTIONS, AuditTrail
from ecp_core.runs.audit.writer import AuditWriter
from ecp_core.runs.children.steps import ChildSteps
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.runs.engine.dispatch import DISPATCH_RETRY
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.engine.service import RunService
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.runs.run.model import RunStatusResponse
from ecp_core.runs.run.state_machine import RUNNABLE
from ecp_core.runs.tasks.service import TaskWork
from ecp_core.runs.tasks.steps import TaskSteps
from ecp_core.signing import Ed25519Signer, PublicSigningKey
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.templates.service import TemplateService
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.keys import DEFAULT_LOG_ORIGIN, LogKeys
from ecp_core.transparency.service import TransparencyLog
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


def _approvals(
    uow: UnitOfWorkFactory,
    clock: Clock,
    steps: ApprovalSteps,
    lifecycle: RunLifecycle,
    runs: RunService,
    *,
    shared: SharedTransactions | None,
) -> ApprovalService:
    """The approval service; with ``shared``, resolutions that arrive together share commits.

    A grouped resolution makes no attempt with side effects in its transaction (ADR 0107): the
    group's other callers would wait for it. The caller drives such a run on after the commit.
    """
    if shared is None:
        return ApprovalService(uow, clock, steps, lifecycle, runs.continue_in)
    without_effects = functools.partial(runs.continue_in, effects=False)
    group = CommitGroup(shared, alone=uow)
    return ApprovalService(uow, clock, steps, lifecycle, without_effects, group=group)


def _transparency(
    uow: UnitOfWorkFactory, keys: LogKeys | None, clock: Clock, trail: AuditTrail
) -> dict[str, Any]:
    """The transparency log's services, when checkpoints can be signed (none otherwise)."""
    if keys is None:
        return {}
    log, integrator = TransparencyLog(uow, keys), LogIntegrator(uow, keys, clock)
    bundles = AuditBundles(trail.run_records, trail.signing_keys, log, integrator)
    exports = AuditExports(trail.by_ids, trail.signing_keys, log, integrator)
    return {
        "transparency": log,
        "log_integrator": integrator,
        "bundles": bundles,
        "exports": exports,
    }


@attrs.frozen(kw_only=True)
class Ecp:
    """The core's services over one storage (a UnitOfWorkFactory) and one signing key."""

    graphs: GraphRegistry
    contracts: ContractService
    runs: RunService
    approvals: ApprovalService
    tasks: TaskWork
    audit: AuditTrail
    audit_settings: AuditSettingsService
    """Which digest version each tenant's new audit records use (ADR 0047)."""
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
    entitlements: Entitlements
    """The plans' quotas on the meters: always read for the account page, enforced only when
    ``entitlements_enabled`` (the services that meter work hold it then, and None otherwise)."""
    entitlements_enabled: bool = False
    """Whether ingestion, scans, schedules and backtests are metered and refused past a quota."""
    certifications: CertificationService[UnitOfWork]
    """Certifications of builds: evaluated at read time, moved through their table (ADR 0043)."""
    templates: TemplateService
    """Versioned graph templates that instantiate into graphs through ``graphs`` (ADR 0045)."""
    rollouts: RolloutService
    """Randomized rollouts of a deployment's graph versions (ADR 0089)."""
    attestations: AttestationService
    """Server-signed attestations, first write wins per correlation (ADR 0041)."""
    audit_readiness: AuditReadiness
    """Whether the audit trail can be signed as the settings and deployments need (ADR 0042)."""
    connectors: ConnectorService
    """Settings-defined and stored connectors to external backends (ADR 0044)."""
    connector_tests: ConnectorTrials
    """Connector tests under cost caps: reserve, call once, commit measured, release (ADR 0044)."""
    connector_reservations: AbandonedReservations
    """Settles the reservations of tests whose process died before settling them (ADR 0050)."""
    transparency: TransparencyLog | None = None
    """Each tenant's Merkle log of audit records: checkpoints, tiles, proofs (ADR 0086).

    None without a signer (checkpoints are signed)."""
    log_integrator: LogIntegrator | None = None
    """Appends committed audit records to their tenant's log (the server's background sweep)."""
    bundles: AuditBundles | None = None
    """Runs' audit bundles: records, keys, a checkpoint and inclusion proofs (None unsigned)."""
    exports: AuditExports | None = None
    """Audit exports: a window's records, proved complete against the log (None unsigned)."""

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
        audit_signing_required: bool = True,
        deployment_mode: DeploymentMode = DeploymentMode.EMBEDDED,
        connectors: ConnectorSetup | None = None,
        audit_verify_connections: int = VERIFY_CONNECTIONS,
        log_origin: str = DEFAULT_LOG_ORIGIN,
        storage_unavailable: Callable[[BaseException], bool] | None = None,
        shared_transactions: SharedTransactions | None = None,
        resolution_transactions: SharedTransactions | None = None,
        rollout_keys: Callable[[], str] = new_rollout_key,
    ) -> "Ecp":
        """Wire every service.

        ``verification_keys`` adds retired keys to the signer's own; ``retention`` says where
        artifacts live, whether economic events are erased, and the configured default TTLs;
        ``dispatch_retry`` how often and how far apart a failing run dispatch is retried;
        ``refuse_unknown_actions`` makes registering a graph whose action nodes name an action
        not (yet) in ``actions`` fail with ``unknown_action`` (the server always sets it);
        ``billing`` (the merchant and the Solo price) enables the billing service;
        ``entitlements_enabled`` enforces the plans' quotas on ingestion, scans and schedules;
        ``backtests`` (the model provider, digest keys, limits) lets backtests run;
        ``audit_signing_required`` and ``deployment_mode`` are reported by audit readiness;
        ``connectors`` (settings-defined connectors, backends) lets connectors be tested;
        ``audit_verify_connections`` caps the units of work audit verifications hold at once;
        ``log_origin`` prefixes each tenant's transparency log origin (``<origin>/<tenant>``);
        ``storage_unavailable`` tells the store's errors of a database away or full from others
        (the run dispatcher backs off without counting those); ``shared_transactions`` (a
        store's ``shared_transaction``) lets concurrent run starts share commits (ADR 0102),
        ``resolution_transactions`` concurrent approval resolutions (ADR 0107);
        ``rollout_keys`` makes each rollout's secret assignment key (random unless a caller
        needs assignments it can repeat).
        """
        clock = clock or SystemClock()
        ids = ids or UuidV7Factory()
        actions = actions or ActionRegistry()
        webhooks = WebhookService(uow, clock, ids, webhook_retry or RetrySchedule())
        stepper = Stepper(clock, ids, actions)
        lifecycle = RunLifecycle(AuditWriter(clock, ids, signer), webhooks, ChildSteps(stepper))
        keys = [*verification_keys, *([signer.published()] if signer is not None else [])]
        retention = retention or RetentionSettings()
        entitlements = Entitlements(uow, clock)
        enforced = entitlements if entitlements_enabled else None
        evidence = EvidenceService(uow, clock, enforced)
        eraser = RunEraser(
            uow,
            clock,
            ids,
            retention.artifacts,
            retention.evidence or evidence,
            econ_erase_enabled=retention.econ_erase_enabled,
        )
        known_actions = actions.names() if refuse_unknown_actions else None
        registry = GraphRegistry(uow, clock, ids, known_actions=known_actions)
        connector_service = ConnectorService(uow, clock, connectors or ConnectorSetup())
        runs = RunService(
            uow,
            clock,
            ids,
            stepper,
            lifecycle,
            dispatch=dispatch_retry or DISPATCH_RETRY,
            storage_unavailable=storage_unavailable,
            shared_transactions=shared_transactions,
        )
        log_keys = None if signer is None else LogKeys(log_origin, signer, tuple(verification_keys))
        trail = AuditTrail(uow, keys, connections=audit_verify_connections)
        return cls(
            graphs=registry,
            contracts=ContractService(uow, clock),
            runs=runs,
            approvals=_approvals(
                uow,
                clock,
                ApprovalSteps(stepper, clock, ids),
                lifecycle,
                runs,
                shared=resolution_transactions,
            ),
            tasks=TaskWork(
                uow,
                clock,
                TaskSteps(stepper, clock),
                lifecycle,
                lambda unit, run: runs.continue_in(unit, run, effects=False),
            ),
            audit=trail,
            audit_settings=AuditSettingsService(uow, clock),
            actions=actions,
            api_keys=ApiKeyService(uow, clock),
            webhooks=webhooks,
            retention=RetentionService(uow, clock, ids, eraser, retention.defaults),
            evidence=evidence,
            debugger=DebuggerService(uow, clock),
            reconciliation=ReconciliationService(uow, clock),
            decisions=DecisionService(uow, clock, ids, enforced),
            backtests=BacktestService(uow, clock, ids, backtests, enforced),
            accounts=AccountService(uow, clock, ids),
            billing=None if billing is None else BillingService(uow, clock, billing),
            entitlements=entitlements,
            entitlements_enabled=entitlements_enabled,
            certifications=CertificationService(
                uow,
                clock,
                ids,
                DeploymentFacts(signer_available=signer is not None, keys=keys),
            ),
            templates=TemplateService(uow, clock, registry, known_actions),
            rollouts=RolloutService(uow, clock, ids, rollout_keys),
            attestations=AttestationService(uow, clock, signer, keys),
            audit_readiness=AuditReadiness(
                uow,
                signer_available=signer is not None,
                signing_required=audit_signing_required,
                deployment_mode=deployment_mode,
            ),
            connectors=connector_service,
            connector_tests=ConnectorTrials(uow, clock, ids, connector_service),
            connector_reservations=AbandonedReservations(
                uow, clock, ids, timeout_seconds=connector_service.setup.timeout_seconds
            ),
            **_transparency(uow, log_keys, clock, trail),
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
        live = len(self.decisions.schedules(tenant_id))
        return self.entitlements.usage(tenant_id, live_schedules=live)

    def record_executions_in(
        self, uow: RunsUnit, tenant_id: str, events: Sequence[ExecutionEvent]
    ) -> IngestResult:
        """Store a run attempt's execution events in that attempt's unit of work (ADR 0098).

        ``model_call`` records its measured cost so: the event commits with the attempt that
        made the call or rolls back with it.
        """
        # Every unit of work these services open is their store's whole UnitOfWork.
        return self.evidence.ingest_executions_in(cast("UnitOfWork", uow), tenant_id, events)

    def resolve(
        self,
        actor: ActorIdentity,
        deployment_ref: str,
        approval_id: str,
        request: ApprovalResolutionRequest,
    ) -> ApprovalResolutionResponse:
        """Resolve an approval and continue the run until it waits or ends."""
        approval, run = self.approvals.resolve(actor, deployment_ref, approval_id, request)
        if run.status in RUNNABLE:
            run = self.runs.drive(run.tenant_id, run.run_id)
        return ApprovalResolutionResponse(approval=approval, run=RunStatusResponse.of(run))
