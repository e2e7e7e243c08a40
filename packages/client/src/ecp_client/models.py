"""The API's response models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this file; a test fails when it is
stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any

import attrs

__all__ = [
    "ActorIdentity",
    "AdminRunListResponse",
    "ApprovalPageResponse",
    "ApprovalPausedState",
    "ApprovalRecord",
    "ApprovalResolution",
    "ApprovalResolutionResponse",
    "AuditBundle",
    "AuditTimelineResponse",
    "AuditVerificationResponse",
    "CalculationInputs",
    "CalculationRow",
    "ClaimedTask",
    "ComparisonPolicy",
    "Condition",
    "ConstraintResult",
    "DecisionArtifact",
    "DecisionListResponse",
    "Delivery",
    "Deployment",
    "DeploymentListResponse",
    "EdgeDefinition",
    "EvidenceCounts",
    "FailureState",
    "GraphDefinition",
    "GraphListResponse",
    "GraphRegistration",
    "GraphVersion",
    "IngestResult",
    "LogKey",
    "NodeAuditRecord",
    "OutcomeSemantics",
    "PublicSigningKey",
    "RecordInclusion",
    "RunStatusResponse",
    "SecretRotated",
    "SourceEvidence",
    "SourceEvidenceCounts",
    "SubscriptionCreated",
    "SubscriptionListResponse",
    "SubscriptionView",
    "TaskClaimResponse",
    "TaskListResponse",
    "TaskLockResponse",
    "TaskSummary",
    "WebhookEventPayload",
]


@attrs.frozen(kw_only=True)
class ActorIdentity:
    """An authenticated subject acting for one tenant with some roles."""

    auth_method: str
    """How the actor authenticated."""
    roles: list[str] = attrs.Factory(list)
    """The roles the actor held when acting."""
    subject: str
    """Who acted: the token's or API key's subject."""
    tenant_id: str = "default"
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    workspace_id: str | None = None
    """The workspace within the tenant, when there is one."""


@attrs.frozen(kw_only=True)
class ApprovalPausedState:
    """Where a run waits for an approval, and the payload the reviewer sees."""

    approval_id: str | None = None
    """The approval's id."""
    input_payload: dict[str, Any] = attrs.Factory(dict)
    """The payload under review."""
    node_id: str
    """The id of a node of the run's graph."""


@attrs.frozen(kw_only=True)
class FailureState:
    """Why a run failed: a stable ``reason`` code, the node, and a message."""

    message: str | None = None
    """What happened, for a person."""
    node_id: str | None = None
    """The id of a node of the run's graph."""
    reason: str
    """A stable code of why the run failed (docs/api/errors.md lists them)."""


@attrs.frozen(kw_only=True)
class RunStatusResponse:
    """A run as clients see it."""

    arm: int | None = None
    """The rollout arm the run was assigned (its number); null without a rollout."""
    campaign_id: str | None
    """The campaign the run counts toward, which its child runs inherit; null when none."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    failure_state: FailureState | None
    """Why the run failed; null unless it did."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    output: dict[str, Any] | None
    """The run's final state once it completed; null before."""
    parent_run_id: str | None
    """For a child run: the run whose subgraph node started it."""
    paused: ApprovalPausedState | None = None
    """While the run waits for an approval: the node, the approval and the payload under review."""
    pending_approval_ids: list[str]
    """The approvals the run waits for."""
    priority: int = 5
    """0 to 9: higher runs first within the tenant's dispatch."""
    rollout_id: str | None = None
    """The rollout that assigned the run its graph version; null when none did."""
    run_id: str
    """The run's id."""
    started_by: str | None = None
    """Who started the run (the caller's subject; a child run's is its root run's); null when it was started without one."""
    status: str
    """Where the run is."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    thread_id: str
    """The thread the run belongs to; runs started with the same thread share it."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    wait_until: datetime | None = None
    """While the run waits at a wait node (`waiting_timer`): when it goes on; null otherwise."""


@attrs.frozen(kw_only=True)
class AdminRunListResponse:
    """``GET /admin/runs``: a page of runs and the total."""

    runs: list[RunStatusResponse]
    """The page of runs, newest first."""
    total: int
    """How many runs the tenant has."""


@attrs.frozen(kw_only=True)
class ApprovalResolution:
    """How a reviewer resolved an approval."""

    actor: ActorIdentity
    """Who resolved it."""
    decision: str
    """What the approver decided."""
    edited_payload: dict[str, Any] | None = None
    """The payload as the approver changed it, when the decision was to edit."""
    reason: str | None = None
    """Why, in the approver's words."""
    resolved_at: datetime
    """When it was resolved (RFC 3339, UTC)."""


@attrs.frozen(kw_only=True)
class ApprovalRecord:
    """A request for a human decision on one paused run."""

    action_digest: str = ""
    """What an approver decides on, as a digest (ADR 0080): the approval id, its status, the proposed payload, the allowed actions, `min_approvals` and the approvals so far. Send it back in a resolution to have it refused (409 `approval_changed`) should any of these have changed since; computed from the record, so a value given here is replaced."""
    allowed_actions: list[str] = attrs.Factory(lambda: ["approve", "reject", "edit_and_approve"])
    """The decisions the approver may take."""
    approval_id: str
    """The approval's id."""
    approvals: list[ApprovalResolution] = attrs.Factory(list)
    """The approvals given so far, oldest first, one per person; the approval is resolved when they number `min_approvals` (or by a rejection, which is in `resolution` only)."""
    approver_roles: list[str] | None = None
    """Roles whose holders may resolve it; null with `approver_subjects` null: anyone allowed to resolve approvals may."""
    approver_subjects: list[str] | None = None
    """Subjects who may resolve it (either list admits)."""
    context_excerpt: dict[str, Any] = attrs.Factory(dict)
    """Parts of the run state shown to the approver for context."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    escalated_from_id: str | None = None
    """The approval this one replaced when it was escalated."""
    escalation_action: str | None = None
    """What the escalation did."""
    forbid_self_approval: bool = False
    """Whether the person who started the run is refused as its approver."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    interaction_type: str = "approval"
    """What kind of human interaction is asked for."""
    min_approvals: int = 1
    """How many distinct people must approve before the run moves on; one rejection rejects."""
    node_id: str
    """The id of a node of the run's graph."""
    proposed_payload: dict[str, Any] | None = None
    """What the approver reviews: the arguments of the gated action, or the run state."""
    rationale: str
    """Why a person decides here."""
    requested_by: ActorIdentity | None = None
    """Who started the run that asks."""
    requested_decision: str = "approve"
    """The decision the run asks for."""
    resolution: ApprovalResolution | None = None
    """The decision once taken."""
    resolution_schema_ref: str | None = None
    """A contract an edited payload must satisfy."""
    run_id: str
    """The run's id."""
    run_started_by: str | None = None
    """Who started the run that asks (the subject `forbid_self_approval` refuses); null when the run was started without one."""
    sla_deadline: datetime | None = None
    """When the approval is escalated if still pending."""
    status: str = "pending"
    """Where the approval is: pending, resolved or escalated."""
    summary: str
    """What the approver is asked, in a line."""
    tenant_id: str = "default"
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    thread_id: str | None = None
    """The thread the run belongs to; runs started with the same thread share it."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    urgency_metadata: dict[str, Any] = attrs.Factory(dict)
    """How urgent the approval is, such as its deadline."""
    workspace_id: str | None = None
    """The workspace within the tenant, when there is one."""


@attrs.frozen(kw_only=True)
class ApprovalPageResponse:
    """A page of approvals in approval id order (oldest first); ``next_cursor`` when more remain."""

    approvals: list[ApprovalRecord]
    """One page of approvals."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class ApprovalResolutionResponse:
    """The resolved approval and the run after it continued."""

    approval: ApprovalRecord
    """The approval as resolved."""
    run: RunStatusResponse
    """The run after it continued."""


@attrs.frozen(kw_only=True)
class LogKey:
    """A public key of the log: note key name, key hash (hex key id), Ed25519 key, vkey."""

    key_hash: str
    """The key id signature lines start with (8 hex digits)."""
    name: str
    """The note key name: the log's origin, ``<origin>/<tenant id>``."""
    public_key: str
    """The Ed25519 public key, base64."""
    vkey: str
    """The verifier key, ``<name>+<key hash>+<base64 type and key>``, as C2SP writes it."""


@attrs.frozen(kw_only=True)
class NodeAuditRecord:
    """One node attempt, chained to its predecessor in the run and signed."""

    attempt: int
    """The attempt's number in the run, from 1: the record's place in the chain."""
    audit_id: str
    """The record's id."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    digest_version: int
    """How `record_digest` is computed (docs/audit-format.md): 1 and 2 over the plaintext, 3 over salted commitments."""
    erased: bool = False
    """Whether the record's personal data was erased (its digest still verifies)."""
    erased_at: datetime | None = None
    """When it was erased."""
    erasure_reason: str | None = None
    """Why it was erased."""
    error: Any | None = None
    """Why the attempt failed, when it did."""
    execution_metadata: Any | None = None
    """How the attempt ran: the action, its fingerprint, the policy's decision, timings."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    input_snapshot: Any | None = None
    """What the node received."""
    memory_interactions: Any | None = None
    """What the attempt read from and wrote to memory."""
    node_id: str
    """The id of a node of the run's graph."""
    output_snapshot: Any | None = None
    """What the node produced."""
    pii_commitments: dict[str, str] | None = None
    """Version 3: the salted commitment of each personal field, by name."""
    pii_salt: str | None = None
    """Version 3: the record's salt as 64 lowercase hex digits; null once erased (and in 1 and 2)."""
    previous_record_digest: str | None
    """The digest of the run's previous record; null for the first."""
    record_digest: str
    """SHA-256 over the record and its predecessor's digest, as 64 hex digits."""
    run_id: str
    """The run's id."""
    signature: str | None = None
    """The Ed25519 signature of `record_digest`, base64."""
    signing_key_id: str | None = None
    """The id of the signing key (`GET /v1/audit/signing-keys` lists them)."""
    status: str
    """How the attempt ended."""
    stderr: str | None = None
    """What the action wrote to standard error, if anything."""
    stdout: str | None = None
    """What the action wrote to standard output, if anything."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    tool_calls: Any | None = None
    """The model tool calls made during the attempt."""
    validation_results: Any | None = None
    """The checks applied to the node's input or output, and their results."""


@attrs.frozen(kw_only=True)
class PublicSigningKey:
    """A published verification key."""

    algorithm: str = "ed25519"
    """The signature algorithm."""
    key_id: str
    """The key's id, as audit records and attestations name it."""
    public_key: str
    """The public key (base64), to verify signatures with."""


@attrs.frozen(kw_only=True)
class RecordInclusion:
    """A record's leaf index and the hashes (base64, leaf end first) proving it in the tree."""

    audit_id: str
    """The record proved."""
    hashes: list[str]
    """The audit path, base64, from the leaf's sibling up."""
    leaf_index: int
    """Its leaf's position in the log (0 first)."""


@attrs.frozen(kw_only=True)
class AuditBundle:
    """Everything needed to verify one run's records offline."""

    checkpoint: str
    """The signed checkpoint (C2SP tlog-checkpoint note) every proof is against."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    format: str = "ecp-audit-bundle/1"
    """What this document is: ``ecp-audit-bundle/1``."""
    inclusion: list[RecordInclusion]
    """One proof per record, in the records' order."""
    log_keys: list[LogKey]
    """The keys that verify the checkpoint (its note signature)."""
    records: list[NodeAuditRecord]
    """The run's records in chain order."""
    run_id: str
    """The run's id."""
    run_status: str
    """The run's public status when the bundle was made."""
    signing_keys: list[PublicSigningKey]
    """The keys that verify the records' signatures."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    tree_size: int
    """The checkpoint's tree size."""


@attrs.frozen(kw_only=True)
class AuditTimelineResponse:
    """A run's records in chain order."""

    deployment_ref: str
    """The deployment's name within the tenant."""
    entries: list[NodeAuditRecord]
    """The run's audit records in chain order."""
    run_id: str | None = None
    """The run's id."""


@attrs.frozen(kw_only=True)
class AuditVerificationResponse:
    """Result of verifying a chain: digest continuity and, separately, signatures."""

    error: str | None = None
    """Why it failed, if it did."""
    failed_audit_id: str | None = None
    """The first record that failed, if any."""
    record_count: int = 0
    """How many records were checked."""
    scope: str
    """What was verified: a run or a deployment."""
    signature_verified: bool | None = None
    """Whether every signature verifies; null when there were no signed records."""
    signing_key_id: str | None = None
    """The id of the signing key (`GET /v1/audit/signing-keys` lists them)."""
    unsigned_record_count: int = 0
    """How many of them carry no signature."""
    verified: bool
    """Whether every digest recomputes and links to its predecessor."""


@attrs.frozen(kw_only=True)
class CalculationRow:
    """A ``run-economics/1`` row: identical runs collapsed, ``runs`` counting them."""

    accepted: bool | None
    """Whether the run's outcome was accepted; null when unknown."""
    cost_measurement: str
    """How the cost is known: measured, estimated or not at all."""
    cost_usd: str | None
    """The run's cost in USD, as a decimal string; null when unknown."""
    outcome_measurement: str | None
    """How the outcome is known."""
    runs: int
    """How many identical runs the row stands for."""


@attrs.frozen(kw_only=True)
class CalculationInputs:
    """Per-run economics behind the figures, baseline and candidate separately."""

    baseline: list[CalculationRow]
    """The baseline's rows."""
    candidate: list[CalculationRow]
    """The candidate's rows."""
    version: str
    """The format of the rows (`run-economics/1`)."""


@attrs.frozen(kw_only=True)
class ClaimedTask:
    """A task as its claiming worker gets it: the work, and the token that holds it."""

    arguments: dict[str, Any]
    """The task's arguments, from the node."""
    attempt: int
    """Which attempt this is (1 on the first)."""
    lock_token: str = attrs.field(repr=False)
    """Proves the worker holds the task; sent back with heartbeat, complete and fail."""
    locked_until: datetime
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    node_id: str
    """The id of a node of the run's graph."""
    run_id: str
    """The run's id."""
    state: dict[str, Any]
    """The run's state when the task was queued."""
    task_id: str
    """The task's id."""
    topic: str
    """The topic the task was queued on."""


@attrs.frozen(kw_only=True)
class ComparisonPolicy:
    """What a candidate must show."""

    allow_estimated_cost: bool = False
    """Whether estimated costs count as evidence (otherwise only measured ones do)."""
    confidence_level: Decimal = Decimal("0.95")
    """The confidence level of the intervals (0.95: 95 percent)."""
    max_cost_growth: Decimal = Decimal("0.1")
    """How much dearer per accepted outcome the candidate may be (0.10: 10 percent)."""
    max_success_rate_drop: Decimal = Decimal("0.0")
    """The largest fall of the success rate tolerated (0: none)."""
    min_outcome_coverage: Decimal = Decimal("0.9")
    """The smallest share of runs that must have a known outcome."""
    min_runs: int = 30
    """The fewest runs per side a verdict needs."""
    min_success_rate: Decimal | None = None
    """The lowest success rate the candidate may have; null makes the comparison abstain."""


@attrs.frozen(kw_only=True)
class Condition:
    """An edge rule in CEL over ``state`` (docs/decisions/0003-conditions-in-cel.md)."""

    allow_cycle_traversal: bool = False
    """Whether the edge may close a cycle in the graph."""
    branch_rule: str = "expression"
    """`expression`: evaluate the expression once over `state`; `all` or `any`: once per entry of `operand_refs` with `operand` bound to its value, and take the edge when all (any) hold."""
    expression: str
    """A CEL expression over `state`, the run state; the edge is taken when it is true."""
    metadata: dict[str, Any] = attrs.Factory(dict)
    """Free-form notes kept with the condition."""
    operand_refs: list[str] = attrs.Factory(list)
    """Dotted paths into the run state whose values `all` and `any` bind to `operand` in turn."""


@attrs.frozen(kw_only=True)
class ConstraintResult:
    """One constraint: its estimate, two-sided interval, limit and status."""

    additional_runs_required: int | None = None
    """About how many more runs would resolve it, when unresolved."""
    estimate: Decimal | None
    """The point estimate; null without evidence."""
    interval: list[Any] | None
    """The two-sided interval, lower and upper bound; null without evidence."""
    limit: Decimal | None
    """The limit the interval is held against."""
    method: str
    """How its interval was computed."""
    name: str
    """The constraint."""
    status: str
    """Where the interval lies against the limit."""


@attrs.frozen(kw_only=True)
class OutcomeSemantics:
    """Digests of each version's outcome definition (null: none)."""

    baseline: str | None
    """The digest of the baseline's outcome definition; null: none."""
    candidate: str | None
    """The digest of the candidate's outcome definition; null: none."""


@attrs.frozen(kw_only=True)
class SourceEvidence:
    """The fingerprint of the selected evidence and the binding rules it was taken under."""

    binding: str
    """The rule that binds evidence to a version."""
    fingerprint: str
    """The fingerprint of the selected evidence."""
    tags: list[str]
    """The binding tags the evidence was selected by."""


@attrs.frozen(kw_only=True)
class EvidenceCounts:
    """What one side's selected evidence holds."""

    charge_revisions: int
    """Charge revisions."""
    execution_events: int
    """Execution events of those runs."""
    missing_runs: int
    """Runs the inventory names that have no evidence."""
    outcome_assertions: int
    """Outcome assertions."""
    provisional_outcomes: int
    """Outcome assertions that are not final yet."""
    runs: int
    """Runs selected."""
    source_windows: int
    """Source windows of the inventory."""
    unattributed_events: int
    """Events that name no run."""


@attrs.frozen(kw_only=True)
class SourceEvidenceCounts:
    """Evidence counts of both sides."""

    baseline: EvidenceCounts
    """The baseline's counts."""
    candidate: EvidenceCounts
    """The candidate's counts."""


@attrs.frozen(kw_only=True)
class DecisionArtifact:
    """An immutable comparison result; identical request and evidence return it again."""

    abstain_reasons: list[str]
    """Why the comparison abstained, as codes."""
    additional_runs_required: int | None
    """About how many more runs would allow a verdict, when it abstains."""
    as_of: datetime
    """The time the evidence was read at (RFC 3339, UTC)."""
    baseline_version: str
    """The workflow version compared against (the one in use)."""
    calculation_inputs: CalculationInputs | None = None
    """The per-run economics behind the figures."""
    candidate_version: str
    """The workflow version that may replace the baseline."""
    claim_class: str
    """What kind of claim the verdict makes."""
    constraints: list[ConstraintResult]
    """Each constraint: estimate, interval, limit and status."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    decision_id: str
    """The decision's id."""
    end: datetime
    """The end of the window, excluded (RFC 3339, UTC)."""
    limitations: list[str]
    """What the verdict does not cover."""
    method_version: str
    """The version of the comparison method."""
    outcome_semantics: OutcomeSemantics | None = None
    """The digests of the outcome definitions."""
    policy: ComparisonPolicy
    """The policy the candidate was held to."""
    recommended_action: str
    """What to do next."""
    request_digest: str
    """The digest of the request; the same request and evidence give the same decision."""
    requested_by: str
    """Who asked for it."""
    revision: int
    """The revision of the decision; new evidence for the same request adds one."""
    schedule_id: str | None = None
    """The schedule that made the comparison, if one did."""
    source_delivery: SourceEvidenceCounts | None = None
    """What each side's evidence holds."""
    source_evidence: SourceEvidence | None = None
    """The fingerprint of the evidence and the binding it was taken under."""
    start: datetime
    """The start of the window, included (RFC 3339, UTC)."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    verdict: str
    """The comparison's answer: pass, fail or abstain."""
    workflow_id: str
    """The workflow the evidence is about (a deployment or graph, as the caller names it)."""


@attrs.frozen(kw_only=True)
class DecisionListResponse:
    """A page of retained decisions, newest first."""

    decisions: list[DecisionArtifact]
    """One page of decisions, newest first."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class WebhookEventPayload:
    """The JSON body every delivery carries; ``event_id`` is stable across retries."""

    data: dict[str, Any] = attrs.Factory(dict)
    """The event's details (such as the run's id); their keys depend on the event type."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    event_id: str
    """The event's id."""
    event_type: str
    """What happened."""
    occurred_at: datetime
    """When it happened (RFC 3339, UTC)."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class Delivery:
    """One event on its way to one subscription (the transactional outbox row)."""

    attempts: int
    """How many times it has been POSTed so far."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    delivery_id: str
    """The webhook delivery's id."""
    event_id: str
    """The event's id."""
    event_type: str
    """What happened."""
    last_error: str | None = None
    """Why the last attempt got no answer (a refused address, a network error); else null."""
    last_status_code: int | None = None
    """The HTTP status of the last answer; null before the first attempt or without an answer."""
    next_attempt_at: datetime
    """When a pending delivery is next POSTed (RFC 3339, UTC)."""
    payload: WebhookEventPayload
    """The body every attempt POSTs, the same on each."""
    replay_of: str | None = None
    """The id of the dead letter this delivery replays; null for a first delivery."""
    status: str
    """``pending`` until it is delivered (a 2xx answer) or runs out of attempts (``dead``)."""
    subscription_id: str
    """The webhook subscription's id."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""


@attrs.frozen(kw_only=True)
class Deployment:
    """A deployment as stored and returned."""

    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    graph_id: str
    """The graph's id within the tenant."""
    graph_version: int
    """The graph version the deployment runs."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    max_concurrent_runs: int | None = None
    """At most this many of its runs run at once; null: no limit (ADR 0079)."""
    paused: bool = False
    """While true the deployment accepts and queues new runs and dispatches none of its runs."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class DeploymentListResponse:
    """The tenant's deployments by deployment_ref; ``next_cursor`` when more remain."""

    deployments: list[Deployment]
    """The tenant's deployments."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class EdgeDefinition:
    """A directed edge, taken when its condition holds (no condition: always)."""

    condition: Condition | None = None
    """When the edge is taken; always when left out."""
    source: str
    """The id of the node the edge leaves."""
    target: str
    """The id of the node the edge enters."""


@attrs.frozen(kw_only=True)
class GraphDefinition:
    """A workflow graph as registered: ``POST /v1/graphs`` body or the Python builder's result."""

    edges: list[EdgeDefinition] = attrs.Factory(list)
    """The directed edges between the nodes."""
    entry: str
    """The id of the node a run starts at."""
    graph_id: str
    """The graph's id within the tenant; registering a changed definition under it makes a new version."""
    max_steps: int = 1000
    """How many node attempts a run may make before it fails."""
    nodes: list[dict[str, Any]]
    """The graph's nodes."""


@attrs.frozen(kw_only=True)
class GraphVersion:
    """An immutable, numbered version of a tenant's graph with its content digest."""

    created_at: datetime
    """When the version was registered."""
    definition: GraphDefinition
    """The definition as registered."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    graph_id: str
    """The graph's id within the tenant."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    version: int
    """The version number, from 1."""


@attrs.frozen(kw_only=True)
class GraphListResponse:
    """The latest version of each graph, by graph id; ``next_cursor`` when more remain."""

    graphs: list[GraphVersion]
    """The tenant's graphs."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class GraphRegistration:
    """Answer to a graph registration: which version the definition is."""

    created: bool
    """Whether this registration made a new version (false: the same definition was registered before)."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    graph_id: str
    """The graph's id within the tenant."""
    version: int
    """The version the definition is: a new one, or the existing one it repeats."""


@attrs.frozen(kw_only=True)
class IngestResult:
    """What a batch did: events newly stored and exact replays left as they were."""

    received: int
    """Events in the batch."""
    replayed: int
    """Exact repeats of stored events, left as they were."""
    stored: int
    """Events newly stored."""


@attrs.frozen(kw_only=True)
class SubscriptionView:
    """A subscription as listed: everything but the secret."""

    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    event_types: list[str]
    """The events delivered to it."""
    subscription_id: str
    """The webhook subscription's id."""
    target_url: str
    """The URL each delivery is POSTed to."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class SecretRotated:
    """The answer to a rotation: the new secret, this once, and when the old one stops signing."""

    previous_secret_expires_at: datetime
    """Until when the secret before it keeps signing beside it (24 hours from the rotation)."""
    secret: str = attrs.field(repr=False)
    """The new signing secret, in the ``whsec_`` form; shown this once."""
    subscription: SubscriptionView
    """The subscription (without secrets)."""


@attrs.frozen(kw_only=True)
class SubscriptionCreated:
    """The answer to a subscription: its view and, this once, the signing secret."""

    secret: str = attrs.field(repr=False)
    """The signing secret: the one given, or a ``whsec_`` one the server made; shown this once."""
    subscription: SubscriptionView
    """The subscription made (without its secret)."""


@attrs.frozen(kw_only=True)
class SubscriptionListResponse:
    """The tenant's live subscriptions (secrets are never shown again)."""

    subscriptions: list[SubscriptionView]
    """Every live subscription of the tenant."""


@attrs.frozen(kw_only=True)
class TaskClaimResponse:
    """Answer to a claim: the tasks now locked for the worker (none when nothing was claimable)."""

    tasks: list[ClaimedTask]
    """The tasks claimed; empty when none was ready."""


@attrs.frozen(kw_only=True)
class TaskSummary:
    """A task as operators list it: where it stands and who holds it, never its lock token."""

    attempt: int
    """How many attempts were made."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    error: str | None
    """The last attempt's error."""
    locked_until: datetime | None
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    max_attempts: int
    """How many attempts are allowed."""
    node_id: str
    """The id of a node of the run's graph."""
    not_before: datetime | None
    """When it may be claimed next (RFC 3339, UTC)."""
    run_id: str
    """The run's id."""
    status: str
    """Where the task is in its life."""
    task_id: str
    """The task's id."""
    topic: str
    """The topic the task was queued on."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    worker_id: str | None
    """The worker holding it, if one does."""


@attrs.frozen(kw_only=True)
class TaskListResponse:
    """Answer to ``GET /v1/tasks``: a page of the tenant's tasks by id, and the next cursor."""

    next_cursor: str | None
    """The cursor of the next page (also in the `Link` header); null on the last."""
    tasks: list[TaskSummary]
    """The tenant's tasks."""


@attrs.frozen(kw_only=True)
class TaskLockResponse:
    """Answer to a heartbeat: until when the worker now holds the task."""

    locked_until: datetime
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    task_id: str
    """The task's id."""
