"""Runs as stored, as started and as shown to clients."""

import enum
from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.types import RunPublicStatus, RunStatus

POLICY_VIOLATION = "policy_violation"
APPROVAL_REJECTED = "approval_rejected"
ACTION_ERROR = "action_error"
CONDITION_ERROR = "condition_error"
MAPPING_ERROR = "mapping_error"
NO_MATCHING_EDGE = "no_matching_edge"
STEP_LIMIT_EXCEEDED = "step_limit_exceeded"
DISPATCH_ERROR = "dispatch_error"
TASK_FAILED = "task_failed"
CHILD_FAILED = "child_failed"
CHILD_DEPTH_EXCEEDED = "child_depth_exceeded"
CHILD_DEPLOYMENT_MISSING = "child_deployment_missing"
WAIT_TIME_INVALID = "wait_time_invalid"

FAILURE_REASONS: dict[str, str] = {
    POLICY_VIOLATION: "The policy guard refused a node; the public status is "
    "`terminated_by_policy`.",
    APPROVAL_REJECTED: "A reviewer rejected the approval.",
    ACTION_ERROR: "An action has no handler, or its handler raised or returned something other "
    "than a canonical JSON object.",
    CONDITION_ERROR: "An edge condition could not be evaluated or did not yield a boolean.",
    MAPPING_ERROR: "A mapping node found no value at its source path.",
    NO_MATCHING_EDGE: "A node has exits, but no exit's condition holds.",
    STEP_LIMIT_EXCEEDED: "The run took more node attempts than the graph's `max_steps`.",
    DISPATCH_ERROR: "Dispatching the run raised an unexpected error on every one of its allowed "
    "attempts (the dispatch retry policy's `max_attempts`; for example, its stored state could "
    "not be read).",
    TASK_FAILED: "The last attempt of a task node's external task failed: the worker reported a "
    "failure, or its lock ran out, on attempt `max_attempts`.",
    CHILD_FAILED: "The child run a `subgraph` node started ended failed or terminated by policy "
    "(the message names the child and its status).",
    CHILD_DEPTH_EXCEEDED: "A `subgraph` node would have started a child nested deeper than the "
    "limit of 8 levels (a deployment that starts itself ends here).",
    CHILD_DEPLOYMENT_MISSING: "A `subgraph` node names a deployment (or a graph version) the "
    "tenant does not have.",
    WAIT_TIME_INVALID: "A `wait` node's `until_path` held no RFC 3339 time with an offset, or a "
    "time more than a year ahead.",
}
"""Every ``FailureState.reason`` a run can end with, and what it means (``docs/api/errors.md``)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class FailureState:
    """Why a run failed: a stable ``reason`` code, the node, and a message."""

    reason: str
    """A stable code of why the run failed (docs/api/errors.md lists them)."""
    node_id: str | None = None
    message: str | None = None
    """What happened, for a person."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalPausedState:
    """Where a run waits for an approval, and the payload the reviewer sees."""

    node_id: str
    approval_id: str | None = None
    input_payload: dict[str, Any] = attrs.field(factory=dict)
    """The payload under review."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovedAction:
    """Arguments a reviewer approved for one action node; consumed when that action runs."""

    node_id: str
    approval_id: str
    arguments: dict[str, Any]


@attrs.frozen(kw_only=True)
class RunClaim:
    """A run dispatch has claimed (held until the claiming unit of work ends), before loading it.

    ``dispatch_failures`` counts the dispatches of the run that raised in a row so far.
    """

    run_id: str
    tenant_id: str
    dispatch_failures: int = 0
    admitting: bool = False
    """The run held no slot and its tenant has concurrency limits (ADR 0079): the claim tried to
    admit it (it holds a slot now if one was free) and the unit of work commits without an
    attempt, so that admissions stay short; a later claim attempts it."""


DEFAULT_PRIORITY = 5
"""A run's priority when its start names none."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class StartRunRequest:
    """Body of ``POST /runs``."""

    deployment_ref: Annotated[str, Text(1, 512)]
    input: dict[str, Any] = attrs.field(factory=dict)
    """The run's initial state."""
    thread_id: Annotated[str, Text(1, 256, trimmed=True)] | None = None
    idempotency_key: Annotated[str, Text(1, 256, trimmed=True)] | None = None
    """A key that makes the start idempotent: the same key and body answer with the same run (also
    the `Idempotency-Key` header)."""
    priority: Annotated[int, Range(0, 9)] = DEFAULT_PRIORITY
    """0 to 9: within the tenant, runs of higher priority are dispatched first (tenants still take
    turns); equal ones in the order they started."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CancelRunRequest:
    """Body of ``POST /runs/{run_id}/cancel``."""

    reason: Annotated[str, Text(1, 500)]
    """Why the run is canceled, in the canceller's words; written into its audit record."""


class PauseSource(enum.StrEnum):
    """Who paused a run's dispatch: the run itself, or its deployment (ADR 0076)."""

    RUN = "run"
    DEPLOYMENT = "deployment"


def with_pause(
    paused_by: tuple[PauseSource, ...], source: PauseSource, *, paused: bool
) -> tuple[PauseSource, ...]:
    """``paused_by`` with ``source`` added (``paused``) or removed, in the enum's order."""
    wanted = set(paused_by) | {source} if paused else set(paused_by) - {source}
    return tuple(s for s in PauseSource if s in wanted)


@attrs.frozen(kw_only=True, field_transformer=checked)
class PauseRequest:
    """Body of the pause and unpause routes of runs and deployments (optional)."""

    reason: Annotated[str, Text(1, 500)] | None = None
    """Why, in the operator's words; logged."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Run:
    """A run and its checkpoint: the state so far and the node to attempt next."""

    run_id: str
    tenant_id: str
    deployment_ref: str
    graph_version_ref: str
    thread_id: str
    status: RunStatus
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    state: dict[str, Any] = attrs.field(factory=dict)
    next_node_id: str | None = None
    steps: Annotated[int, Range(0)] = 0
    attempts: Annotated[int, Range(0)] = 0
    failure_state: FailureState | None = None
    paused: ApprovalPausedState | None = None
    pending_approval_ids: tuple[str, ...] = ()
    approved_action: ApprovedAction | None = None
    output: dict[str, Any] | None = None
    parent_run_id: str | None = None
    campaign_id: str | None = None
    ancestor_run_ids: tuple[str, ...] = ()
    """A child run's parent, grandparent, ... up to the root run (empty for a root run)."""
    idempotency_key: str | None = None
    request_digest: str | None = None
    metadata: dict[str, Any] | None = None
    artifacts: tuple[str, ...] | None = None
    error: dict[str, Any] | None = None
    erased_at: Annotated[datetime, AwareUtc()] | None = None
    started_by: str | None = None
    """Who started the run (the caller's subject; a child run's is its root's); None when the
    run was started without one (ADR 0075)."""
    priority: Annotated[int, Range(0, 9)] = DEFAULT_PRIORITY
    """Higher first within the tenant's dispatch (ADR 0077)."""
    paused_by: tuple[PauseSource, ...] = ()
    """Who paused the run's dispatch (the run, its deployment, or both); empty: nobody. Not to be
    confused with ``paused``, where the run waits for an approval."""
    wait_until: Annotated[datetime, AwareUtc()] | None = None
    """While the run waits at a wait node: when it wakes (ADR 0078); None otherwise."""
    rollout_id: str | None = None
    """The rollout that assigned the run its graph version (ADR 0089); None: none did."""
    arm: Annotated[int, Range(0)] | None = None
    """The rollout arm the run was assigned; None without a rollout."""
    holds_slot: bool = False
    """Whether the run holds one of its deployment's and its tenant's concurrency slots (ADR
    0079): taken when the engine attempts it, given up as soon as it is not dispatchable (it
    waits, is paused or ends), which the model enforces."""

    def __attrs_post_init__(self) -> None:
        """A run holds a slot only while dispatchable: a waiting, paused or ended run gives it up."""
        if self.holds_slot and not self.dispatchable:
            object.__setattr__(self, "holds_slot", False)  # frozen: this one fix-up

    @property
    def public_status(self) -> RunPublicStatus:
        """The status clients see; a policy failure shows as ``terminated_by_policy``."""
        return public_status(self.status, self.failure_state, paused=bool(self.paused_by))

    @property
    def dispatchable(self) -> bool:
        """Whether the engine may attempt the run's next node now (runnable and not paused)."""
        return self.status in (RunStatus.PENDING, RunStatus.RUNNING) and not self.paused_by


def public_status(
    status: RunStatus, failure: FailureState | None, *, paused: bool = False
) -> RunPublicStatus:
    """Map an internal status (failure reason, pause) to the public one.

    A policy failure shows as ``terminated_by_policy``; a paused run that would otherwise be
    runnable shows as ``paused`` (a paused run waiting for a person or a worker keeps waiting).
    """
    if status is RunStatus.FAILED and failure is not None and failure.reason == POLICY_VIOLATION:
        return RunPublicStatus.TERMINATED_BY_POLICY
    if paused and status in (RunStatus.PENDING, RunStatus.RUNNING):
        return RunPublicStatus.PAUSED
    return RunPublicStatus(status.value.lower())


@attrs.frozen(kw_only=True, field_transformer=checked)
class RunStatusResponse:
    """A run as clients see it."""

    run_id: str
    tenant_id: str
    deployment_ref: str
    graph_version_ref: str
    thread_id: str
    status: RunPublicStatus
    """Where the run is."""
    failure_state: FailureState | None
    """Why the run failed; null unless it did."""
    pending_approval_ids: tuple[str, ...]
    """The approvals the run waits for."""
    output: dict[str, Any] | None
    """The run's final state once it completed; null before."""
    parent_run_id: str | None
    """For a child run: the run whose subgraph node started it."""
    campaign_id: str | None
    """The campaign the run counts toward, which its child runs inherit; null when none."""
    created_at: datetime
    updated_at: datetime
    paused: ApprovalPausedState | None = None
    """While the run waits for an approval: the node, the approval and the payload under review."""
    started_by: str | None = None
    """Who started the run (the caller's subject; a child run's is its root run's); null when it
    was started without one."""
    priority: int = DEFAULT_PRIORITY
    """0 to 9: higher runs first within the tenant's dispatch."""
    wait_until: datetime | None = None
    """While the run waits at a wait node (`waiting_timer`): when it goes on; null otherwise."""
    rollout_id: str | None = None
    """The rollout that assigned the run its graph version; null when none did."""
    arm: int | None = None
    """The rollout arm the run was assigned (its number); null without a rollout."""

    @classmethod
    def of(cls, run: Run) -> "RunStatusResponse":
        """Project a stored run to its public response."""
        return cls(
            run_id=run.run_id,
            tenant_id=run.tenant_id,
            deployment_ref=run.deployment_ref,
            graph_version_ref=run.graph_version_ref,
            thread_id=run.thread_id,
            status=run.public_status,
            failure_state=run.failure_state,
            pending_approval_ids=run.pending_approval_ids,
            output=run.output,
            parent_run_id=run.parent_run_id,
            campaign_id=run.campaign_id,
            created_at=run.created_at,
            updated_at=run.updated_at,
            paused=run.paused,
            started_by=run.started_by,
            priority=run.priority,
            wait_until=run.wait_until,
            rollout_id=run.rollout_id,
            arm=run.arm,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChildRunSummaryResponse:
    """A child run in a parent's listing."""

    run_id: str
    status: RunPublicStatus
    """The child run's status."""
    deployment_ref: str
    graph_version_ref: str
    thread_id: str
    parent_run_id: str
    """The run that started it."""
    campaign_id: str | None = None
    """The campaign it belongs to, when there is one."""

    @classmethod
    def of(cls, run: Run) -> "ChildRunSummaryResponse":
        """Summarise a stored child run (one with a parent)."""
        assert run.parent_run_id is not None  # noqa: S101 - only child runs are listed
        return cls(
            run_id=run.run_id,
            status=run.public_status,
            deployment_ref=run.deployment_ref,
            graph_version_ref=run.graph_version_ref,
            thread_id=run.thread_id,
            parent_run_id=run.parent_run_id,
            campaign_id=run.campaign_id,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChildRunListResponse:
    """``GET /runs/{run_id}/children``: a page of a run's child runs, oldest first."""

    children: tuple[ChildRunSummaryResponse, ...]
    """The runs this run started."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class AdminRunListResponse:
    """``GET /admin/runs``: a page of runs and the total."""

    runs: tuple[RunStatusResponse, ...]
    """The page of runs, newest first."""
    total: int
    """How many runs the tenant has."""
