"""Use cases for approvals: resolve, list (per run, and the inbox across runs), escalate."""

from collections.abc import Callable
from datetime import datetime

from ecp_core.canonical import canonical_json
from ecp_core.contracts.schema import payload_errors
from ecp_core.errors import (
    AlreadyApproved,
    ApprovalAlreadyResolved,
    ApprovalChanged,
    ApprovalWithdrawn,
    Conflict,
    FieldError,
    NotAnApprover,
    NotFound,
    SelfApprovalForbidden,
    ValidationFailed,
)
from ecp_core.evolve import evolve
from ecp_core.identity import ActorIdentity
from ecp_core.pages import check_limit, decode_cursor, invalid_cursor, next_page
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.shared import WorkGroup
from ecp_core.ports.system import Clock
from ecp_core.registry.service import require_graph
from ecp_core.runs.approvals.model import (
    ApprovalActionRecord,
    ApprovalRecord,
    ApprovalResolution,
    ApprovalResolutionRequest,
)
from ecp_core.runs.approvals.steps import ApprovalSteps
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.moves import StepApplier
from ecp_core.types import ApprovalDecision, ApprovalStatus
from ecp_core.wire import format_timestamp, parse_timestamp


def _check_request(
    uow: RunsUnit, approval: ApprovalRecord, request: ApprovalResolutionRequest
) -> None:
    errors: list[FieldError] = []
    if request.decision not in approval.allowed_actions:
        errors.append(FieldError(loc=("decision",), msg="not allowed for this approval"))
    editing = request.decision is ApprovalDecision.EDIT_AND_APPROVE
    if editing and request.edited_payload is None:
        errors.append(FieldError(loc=("edited_payload",), msg="required for edit_and_approve"))
    if not editing and request.edited_payload is not None:
        errors.append(FieldError(loc=("edited_payload",), msg="only allowed with edit_and_approve"))
    ref = approval.resolution_schema_ref
    if editing and request.edited_payload is not None and ref is not None:
        contract = uow.contracts.get(approval.tenant_id, ref)
        if contract is None:
            errors.append(FieldError(loc=("edited_payload",), msg=f"contract {ref!r} not found"))
        else:
            found = payload_errors(contract.json_schema, request.edited_payload)
            errors.extend(evolve(e, loc=("edited_payload", *e.loc)) for e in found)
    if errors:
        raise ValidationFailed("the resolution is invalid", errors=errors)


INBOX_CURSOR = "approvals"
"""The kind of the approval inbox's cursors."""
DEADLINE_CURSOR = "approvals-by-deadline"
"""The kind of the cursors of the inbox by SLA (:meth:`ApprovalService.inbox`)."""


NO_DEADLINE = "-"
"""What a cursor of the inbox by SLA holds for an approval without one."""


def _deadline_of(text: str) -> datetime | None:
    """A deadline a cursor holds; ValidationFailed for one this service did not write."""
    if text == NO_DEADLINE:
        return None
    try:
        return parse_timestamp(text)
    except ValueError as exc:
        raise invalid_cursor() from exc


def _refuse_unless_pending(approval: ApprovalRecord) -> None:
    """ApprovalWithdrawn for a withdrawn approval, ApprovalAlreadyResolved for any other not pending."""
    if approval.status is ApprovalStatus.WITHDRAWN:
        raise ApprovalWithdrawn(
            f"approval {approval.approval_id} was withdrawn: its run was canceled"
        )
    if approval.status is not ApprovalStatus.PENDING:
        raise ApprovalAlreadyResolved(f"approval {approval.approval_id} is {approval.status.value}")


def _refuse_unless_approver(approval: ApprovalRecord, actor: ActorIdentity) -> None:
    """NotAnApprover, SelfApprovalForbidden or AlreadyApproved when ``actor`` may not resolve."""
    if not approval.names(actor):
        raise NotAnApprover(f"{actor.subject!r} is not an approver of {approval.approval_id}")
    if not approval.admits(actor):
        raise SelfApprovalForbidden(
            f"approval {approval.approval_id} refuses the person who started its run"
        )
    if approval.approved_by(actor.subject):
        raise AlreadyApproved(
            f"{actor.subject!r} already approved {approval.approval_id}; "
            f"it needs {approval.min_approvals} distinct approvers"
        )


def _refuse_if_changed(approval: ApprovalRecord, request: ApprovalResolutionRequest) -> None:
    """ApprovalChanged when the approval, read under its run's lock, is not as the approver saw it.

    Read afresh: the lock's own read of the approval is as of the statement's start, before any
    wait for the lock, and an escalation or another approval may have committed in that wait.
    """
    if request.action_digest != approval.action_digest:
        raise ApprovalChanged(
            f"approval {approval.approval_id} changed since it was shown "
            f"(it is {approval.status.value}, with {len(approval.approvals)} of "
            f"{approval.min_approvals} approvals): read it again before deciding"
        )


def _check_same_payload(approval: ApprovalRecord, request: ApprovalResolutionRequest) -> None:
    """Every approval of one approval approves the same payload (ADR 0075).

    The first approval fixes it: the proposed payload (``approve``) or its edit
    (``edit_and_approve``); each later one must approve exactly that. A rejection always may.
    """
    if not approval.approvals or request.decision is ApprovalDecision.REJECT:
        return
    fixed = approval.approvals[0].edited_payload
    if fixed is None and request.edited_payload is not None:
        msg = "an earlier approval approved the proposed payload: approve it unchanged or reject"
        raise ValidationFailed(
            "the resolution is invalid", errors=[FieldError(loc=("edited_payload",), msg=msg)]
        )
    if fixed is not None and (
        request.edited_payload is None
        or canonical_json(request.edited_payload) != canonical_json(fixed)
    ):
        msg = (
            "an earlier approval edited the payload: approve that edit with edit_and_approve "
            "and the same edited_payload, or reject"
        )
        loc = ("decision",) if request.edited_payload is None else ("edited_payload",)
        raise ValidationFailed("the resolution is invalid", errors=[FieldError(loc=loc, msg=msg)])


class ApprovalService:
    """Resolves approvals; each resolution and its audit record commit together."""

    def __init__(
        self,
        uow: Callable[[], RunsUnit],
        clock: Clock,
        steps: ApprovalSteps,
        lifecycle: StepApplier,
        continue_run: Callable[[RunsUnit, Run], Run] | None = None,
        *,
        group: WorkGroup | None = None,
    ) -> None:
        """Wire the service.

        ``continue_run`` goes on with a resolved run in the resolution's transaction
        (``RunService.continue_in``); None leaves the run where the resolution put it. With
        ``group``, resolutions that arrive together share its transactions, each in a savepoint
        (ADR 0107); without, each resolution commits on its own.
        """
        self._uow = uow
        self._clock = clock
        self._steps = steps
        self._lifecycle = lifecycle
        self._continue_run = continue_run
        self.group = group
        """The resolutions' commit group (None: each resolution commits alone)."""

    def resolve(
        self,
        actor: ActorIdentity,
        deployment_ref: str,
        approval_id: str,
        request: ApprovalResolutionRequest,
    ) -> tuple[ApprovalRecord, Run]:
        """Resolve a pending approval; the run moves on (or fails on reject) in the same commit.

        An approval that asks for ``min_approvals`` approvals counts ``actor``'s and keeps the
        run waiting until the last one needed; only its approvers may resolve it, each approving
        once (ADR 0075). Every step holds the run's lock, so no two approvals count as the last.

        With ``continue_run`` wired, the run's next attempts join that commit while they are
        safe to (ADR 0059); the caller continues the run afterwards if it still runs
        (RunService.drive or the dispatcher).
        """
        if self.group is None:
            with self._uow() as uow:
                return self._resolve_in(uow, actor, deployment_ref, approval_id, request)
        return self.group.run(
            lambda uow: self._resolve_in(uow, actor, deployment_ref, approval_id, request)
        )

    def _resolve_in(
        self,
        uow: RunsUnit,
        actor: ActorIdentity,
        deployment_ref: str,
        approval_id: str,
        request: ApprovalResolutionRequest,
    ) -> tuple[ApprovalRecord, Run]:
        """:meth:`resolve` in the unit of work ``uow``, committing it."""
        tenant_id = actor.tenant_id
        found = uow.runs.lock_for_approval(tenant_id, approval_id)
        if found is None or found[0].deployment_ref != deployment_ref:
            raise NotFound(f"approval {approval_id} not found")
        approval, run = found
        if request.action_digest is not None:
            _refuse_if_changed(uow.approvals.get(tenant_id, approval_id) or approval, request)
        _refuse_unless_pending(approval)
        _check_request(uow, approval, request)
        # Under the run's lock: a run still paused on the approval means it is still pending
        # (a resolution or an escalation moves the run in the same commit). Otherwise one
        # committed meanwhile: the approval is read afresh to say which.
        if run is None or run.paused is None or run.paused.approval_id != approval_id:
            approval = uow.approvals.get(tenant_id, approval_id) or approval
            _refuse_unless_pending(approval)
            raise Conflict(f"run {approval.run_id} is not waiting for approval {approval_id}")
        if approval.min_approvals > 1:
            # The approvals given so far, read under the run's lock: the lock's own read of
            # the approval is as of the statement's start, before any wait for the lock.
            approval = uow.approvals.get(tenant_id, approval_id) or approval
        _refuse_unless_approver(approval, actor)
        _check_same_payload(approval, request)
        now = self._clock.now()
        resolution = ApprovalResolution(
            decision=request.decision,
            actor=actor,
            resolved_at=now,
            edited_payload=request.edited_payload,
            reason=request.reason,
        )
        graph = require_graph(uow, run.tenant_id, run.graph_version_ref)
        if request.decision is ApprovalDecision.REJECT:
            approval = evolve(
                approval, status=ApprovalStatus.RESOLVED, resolution=resolution, updated_at=now
            )
            step = self._steps.decided(run, graph, approval)
        else:
            approvals = (*approval.approvals, resolution)
            approval = evolve(approval, approvals=approvals, updated_at=now)
            if len(approvals) < approval.min_approvals:
                step = self._steps.approved_in_part(run, graph, approval)
            else:
                approval = evolve(approval, status=ApprovalStatus.RESOLVED, resolution=resolution)
                step = self._steps.decided(run, graph, approval)
        run = self._lifecycle.apply(uow, step)
        if self._continue_run is not None:
            run = self._continue_run(uow, run)
        uow.runs.save(run)
        uow.commit()
        return approval, run

    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals (NotFound for an unknown run)."""
        with self._uow() as uow:
            if uow.runs.get(tenant_id, run_id) is None:
                raise NotFound(f"run {run_id} not found")
            return uow.approvals.for_run(tenant_id, run_id, status)

    def page(
        self,
        tenant_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        status: ApprovalStatus | None = None,
        deployment_ref: str | None = None,
        run_id: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> tuple[list[ApprovalRecord], str | None]:
        """The inbox: a page of the tenant's approvals across runs, matching every filter given.

        In approval id order (oldest first, ids being time-ordered); the next cursor, or None.
        With ``approver``, only the approvals that person may resolve by their approval rules
        (ADR 0075); the HTTP inbox passes the caller.
        """
        check_limit(limit)
        after = None if cursor is None else decode_cursor(INBOX_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            found = uow.approvals.page(
                tenant_id,
                limit=limit + 1,
                after=after,
                status=status,
                deployment_ref=deployment_ref,
                run_id=run_id,
                approver=approver,
            )
        return next_page(found, limit, INBOX_CURSOR, lambda approval: (approval.approval_id,))

    def inbox(
        self,
        approver: ActorIdentity,
        *,
        limit: int = 25,
        cursor: str | None = None,
        deployment_ref: str | None = None,
    ) -> tuple[list[ApprovalRecord], str | None]:
        """A page of the pending approvals ``approver`` may resolve, the soonest SLA first.

        Those without an SLA come last, ties by approval id; the next cursor, or None (the
        console's inbox, ADR 0080).
        """
        check_limit(limit)
        after = None
        if cursor is not None:
            deadline, approval_id = decode_cursor(DEADLINE_CURSOR, cursor, 2)
            after = (_deadline_of(deadline), approval_id)
        with self._uow() as uow:
            found = uow.approvals.pending_by_deadline(
                approver.tenant_id,
                limit=limit + 1,
                after=after,
                deployment_ref=deployment_ref,
                approver=approver,
            )
        return next_page(
            found,
            limit,
            DEADLINE_CURSOR,
            lambda approval: (
                NO_DEADLINE
                if approval.sla_deadline is None
                else format_timestamp(approval.sla_deadline),
                approval.approval_id,
            ),
        )

    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord:
        """One approval; NotFound otherwise."""
        with self._uow() as uow:
            approval = uow.approvals.get(tenant_id, approval_id)
        if approval is None:
            raise NotFound(f"approval {approval_id} not found")
        return approval

    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """An approval's action trail (NotFound for an unknown approval)."""
        with self._uow() as uow:
            if uow.approvals.get(tenant_id, approval_id) is None:
                raise NotFound(f"approval {approval_id} not found")
            return uow.approvals.actions(tenant_id, approval_id)

    def escalate_overdue(self, limit: int = 100) -> list[ApprovalRecord]:
        """Mark pending approvals past their SLA escalated, each replaced by a new pending one."""
        created: list[ApprovalRecord] = []
        with self._uow() as uow:
            now = self._clock.now()
            for approval in uow.approvals.overdue(now, limit):
                run = uow.runs.lock(approval.tenant_id, approval.run_id)
                if (
                    run is None
                    or run.paused is None
                    or run.paused.approval_id != approval.approval_id
                ):
                    continue
                graph = require_graph(uow, run.tenant_id, run.graph_version_ref)
                run = self._lifecycle.apply(uow, self._steps.escalate(run, graph, approval))
                uow.runs.save(run)
                created.extend(
                    uow.approvals.for_run(run.tenant_id, run.run_id, ApprovalStatus.PENDING)
                )
            uow.commit()
        return created
