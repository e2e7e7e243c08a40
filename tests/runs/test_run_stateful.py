"""A Hypothesis state machine that drives random run, approval, interrupt and policy sequences.

After every step it checks, for every run started so far, the invariants of the service's rules:
legal status changes, one audit record per attempt in a verifying signed chain, pending approvals
exactly while a run waits for one, and the failure shapes of policy denials, rejections, handler
errors and step limits.

The default run is small enough for ``make test``; ``pytest -m slow`` adds a thorough run.
"""

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from ecp_core import (
    ActionContext,
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    Capability,
    CreateDeploymentRequest,
    DeploymentPolicyRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    GraphDefinition,
    RunPublicStatus,
    RunStatus,
    RunStatusResponse,
    ServiceRole,
    StartRunRequest,
)
from ecp_core.audit.record import NodeAuditRecord
from ecp_core.canonical import canonical_json
from ecp_core.errors import (
    ApprovalAlreadyResolved,
    Conflict,
    IllegalTransition,
    NotFound,
    ValidationFailed,
)
from ecp_core.graphs import (
    ActionDescriptorV1,
    Condition,
    ConstantMappingOperation,
    CopyMappingOperation,
    NodeDefinition,
)
from ecp_core.runs.engine.service import CHAINED_ATTEMPTS
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL, TRANSITIONS
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.strategies.text import text
from ecp_core.types import ApprovalStatus, AttemptStatus, NodeKind

pytestmark = [
    pytest.mark.unit,
    pytest.mark.spec(
        "§2.1 run-status",
        "§3.1 approval-pauses-run",
        "§3.1 policy-denial",
        "§6.2 audit-per-attempt",
        "C4 chain-per-run",
    ),
]

TENANT = "acme"
INTRUDER = "intruder"
EPOCH = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
SIGNER = Ed25519Signer.generate()
REVIEWER = ActorIdentity(
    subject="reviewer@example.com",
    auth_method=AuthMethod.BEARER,
    roles=(ServiceRole.APPROVER,),
    tenant_id=TENANT,
)
OUTSIDER = ActorIdentity(
    subject="someone@intruder.example", auth_method=AuthMethod.API_KEY, tenant_id=INTRUDER
)

PAY_SLA = 60
GATE_SLA = 30
LOOP_MAX_STEPS = 4
MAX_RUNS = 5
"""Few runs per sequence, so that steps go into taking them deep rather than starting more."""


def _reachable(start: RunStatus) -> frozenset[RunStatus]:
    seen = {start}
    frontier = [start]
    while frontier:
        for target in TRANSITIONS[frontier.pop()]:
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return frozenset(seen)


REACHABLE = {status: _reachable(status) for status in RunStatus}
"""Statuses a run may show after one call, given the status it showed before (itself included)."""


# -- graphs ----------------------------------------------------------------------------------------


def guard(context: ActionContext) -> Mapping[str, Any]:
    """A registered handler that raises when the run state asks for it (``"boom": true``)."""
    if context.state.get("boom") is True:
        raise RuntimeError("boom requested by the run state")
    return {"guarded": True}


def refund_graph() -> GraphDefinition:
    """The example graph: set, approval node, echo bound to network_write, CEL edge, end."""
    return (
        GraphBuilder("refund-triage")
        .action("classify", "set", arguments={"values": {"category": "refund"}})
        .approval("review", summary="Approve the refund", rationale="Refunds need a person")
        .action(
            "notify",
            "echo",
            arguments={"to": "customer"},
            capabilities=(Capability.NETWORK_WRITE,),
        )
        .end("done")
        .chain("classify", "review", "notify")
        .edge("notify", "done", when="state.category == 'refund'")
        .build()
    )


def payment_graph() -> GraphDefinition:
    """A raising handler, an approval-gated action with an SLA, an interrupt, a mapping, CEL edges.

    The mapping fans out on two conditions that do not cover every resumed value, so some runs end
    ``no_matching_edge``. (A resume whose own exits fail is covered in test_run_regressions.)
    """
    pay = ActionDescriptorV1(
        name="echo",
        fingerprint="echo/1",
        arguments={"amount": 10, "currency": "EUR"},
        capability_refs=(Capability.EXTERNAL_API_CALL,),
        requires_approval=True,
    )
    return (
        GraphBuilder("payment")
        .action("guard", "guard", capabilities=(Capability.NETWORK_READ,))
        .node(NodeDefinition(id="pay", kind=NodeKind.ACTION, action=pay, sla_seconds=PAY_SLA))
        .interrupt("ask", target_path="answer.value", prompt="Did the customer confirm?")
        .mapping(
            "shape",
            ConstantMappingOperation(target_path="meta.shaped", value=True),
            CopyMappingOperation(source_path="answer.value", target_path="copied"),
        )
        .end("accepted")
        .end("declined")
        .chain("guard", "pay", "ask", "shape")
        .edge("shape", "accepted", when="state.copied == 'yes'")
        .edge("shape", "declined", when="state.copied == 'no'")
        .build()
    )


def loop_graph() -> GraphDefinition:
    """A cycle through an approval node (approve or reject only), bounded by max_steps.

    The run goes round again unless its input says ``"loop": false``; two approvals later it ends
    ``step_limit_exceeded``.
    """
    again = Condition(
        expression="!has(state.loop) || state.loop == true", allow_cycle_traversal=True
    )
    return (
        GraphBuilder("review-loop", max_steps=LOOP_MAX_STEPS)
        .action("tick", "set", arguments={"values": {"ticked": True}})
        .approval(
            "gate",
            summary="Another round?",
            rationale="Each round needs a person",
            allowed_actions=(ApprovalDecision.APPROVE, ApprovalDecision.REJECT),
            sla_seconds=GATE_SLA,
        )
        .end("done")
        .edge("tick", "gate")
        .edge("gate", "tick", when=again)
        .edge("gate", "done")
        .build()
    )


GRAPHS = {"refunds": refund_graph(), "payments": payment_graph(), "loop": loop_graph()}
DEPLOYMENTS = sorted(GRAPHS)
DENIABLE = (Capability.NETWORK_WRITE, Capability.EXTERNAL_API_CALL, Capability.NETWORK_READ)


# -- strategies ------------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    text(max_size=6),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
run_inputs = st.fixed_dictionaries(
    {},
    optional={
        "boom": st.integers(0, 3).map(lambda n: n == 0),
        "loop": st.booleans(),
        "order": text(max_size=8),
        "amount": st.integers(-1000, 1000),
        "nested": json_values,
    },
)
edited_payloads = st.dictionaries(
    st.sampled_from(["amount", "currency", "category", "note", "boom", "loop", "answer"]),
    json_values,
    max_size=4,
)
resume_values = st.one_of(st.sampled_from(["yes", "no", "maybe"]), json_values)
deny_sets = st.sampled_from([(), (), *((c,) for c in DENIABLE), DENIABLE]).map(set)
"""Mostly nothing or one capability, so that runs get deep enough between denials."""
decisions = st.sampled_from(
    [
        ApprovalDecision.APPROVE,
        ApprovalDecision.EDIT_AND_APPROVE,
        ApprovalDecision.APPROVE,
        ApprovalDecision.REJECT,
    ]
)
reasons = st.none() | text(min_size=1, max_size=20)
idempotency_keys = st.none() | st.sampled_from(["key-a", "key-b", "key-c"])


class RunMachine(RuleBasedStateMachine):
    """Random sequences of the run use cases over one in-memory Ecp."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FixedClock(EPOCH)
        self.ecp = Ecp.in_memory(signer=SIGNER, clock=self.clock, ids=SequentialIds("sm"))
        self.ecp.actions.register("guard", guard)
        self.status: dict[str, RunStatus] = {}
        self.deployment_of: dict[str, str] = {}
        self.settled: dict[str, str] = {}
        """Approvals no longer pending (resolved or escalated), with their deployment."""
        self.keys: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}

    @initialize(payloads=st.tuples(run_inputs, run_inputs, run_inputs))
    def deploy_graphs_and_start_one_run_each(self, payloads: tuple[dict[str, Any], ...]) -> None:
        for (ref, graph), payload in zip(GRAPHS.items(), payloads, strict=True):
            registration = self.ecp.graphs.register(TENANT, graph)
            self.ecp.graphs.deploy(
                TENANT,
                CreateDeploymentRequest(
                    deployment_ref=ref, graph_id=graph.graph_id, graph_version=registration.version
                ),
            )
            self.start_run(ref, payload, None)

    # -- helpers -------------------------------------------------------------------------------

    def run(self, run_id: str) -> Run:
        return self.ecp.runs.get(TENANT, run_id)

    def records(self, run_id: str) -> tuple[NodeAuditRecord, ...]:
        return self.ecp.audit.timeline(TENANT, run_id).entries

    def runs_in(self, *statuses: RunStatus) -> list[str]:
        return sorted(run_id for run_id, status in self.status.items() if status in statuses)

    def has_runs_in(self, *statuses: RunStatus) -> bool:
        return any(status in statuses for status in self.status.values())

    # -- rules ---------------------------------------------------------------------------------

    @precondition(lambda self: len(self.status) < MAX_RUNS)
    @rule(ref=st.sampled_from(DEPLOYMENTS), payload=run_inputs, key=idempotency_keys)
    def start_run(self, ref: str, payload: dict[str, Any], key: str | None) -> None:
        request = StartRunRequest(deployment_ref=ref, input=payload, idempotency_key=key)
        earlier = None if key is None else self.keys.get((ref, key))
        if earlier is not None and canonical_json(earlier[0]) != canonical_json(payload):
            with pytest.raises(Conflict):
                self.ecp.runs.start(TENANT, request)
            return
        run, created = self.ecp.runs.start(TENANT, request)
        if earlier is not None:
            assert not created
            assert run.run_id == earlier[1]
            return
        assert created
        assert run.status is RunStatus.PENDING
        assert run.state == payload
        assert run.attempts == 0
        self.status[run.run_id] = run.status
        self.deployment_of[run.run_id] = ref
        if key is not None:
            self.keys[ref, key] = (payload, run.run_id)

    @precondition(lambda self: bool(self.status))
    @rule(data=st.data(), settled_too=st.integers(0, 4).map(lambda n: n == 0))
    def drive_run(self, data: st.DataObject, settled_too: bool) -> None:
        live = sorted(run_id for run_id, status in self.status.items() if status not in TERMINAL)
        run_id = data.draw(
            st.sampled_from(live if live and not settled_too else sorted(self.status))
        )
        run = self.ecp.runs.drive(TENANT, run_id)
        assert run.status in TERMINAL or run.status in {
            RunStatus.WAITING_APPROVAL,
            RunStatus.WAITING_INTERRUPT,
        }

    @precondition(lambda self: self.has_runs_in(RunStatus.PENDING, RunStatus.RUNNING))
    @rule(data=st.data())
    def advance_one_step(self, data: st.DataObject) -> None:
        candidates = self.runs_in(RunStatus.PENDING, RunStatus.RUNNING)
        run_id = data.draw(st.sampled_from(candidates), label="run")
        before = self.run(run_id)
        after = self.ecp.runs.advance(TENANT, run_id)
        # One attempt, and more in the same transaction while they change nothing outside the
        # run (ADR 0059); every attempt is one step and one record.
        made = after.attempts - before.attempts
        assert 1 <= made <= CHAINED_ATTEMPTS
        assert after.steps == before.steps + made

    @precondition(lambda self: self.has_runs_in(RunStatus.WAITING_APPROVAL))
    @rule(
        data=st.data(),
        decision=decisions,
        edited=st.none() | edited_payloads,
        reason=reasons,
    )
    def resolve_pending_approval(
        self,
        data: st.DataObject,
        decision: ApprovalDecision,
        edited: dict[str, Any] | None,
        reason: str | None,
    ) -> None:
        run_id = data.draw(st.sampled_from(self.runs_in(RunStatus.WAITING_APPROVAL)), label="run")
        before = self.run(run_id)
        (approval_id,) = before.pending_approval_ids
        approval = self.ecp.approvals.get(TENANT, approval_id)
        ref = self.deployment_of[run_id]
        if decision is ApprovalDecision.EDIT_AND_APPROVE and edited is None:
            edited = data.draw(edited_payloads, label="edited_payload")
        if decision is not ApprovalDecision.EDIT_AND_APPROVE:
            edited = None
        request = ApprovalResolutionRequest(decision=decision, edited_payload=edited, reason=reason)

        if decision not in approval.allowed_actions:
            with pytest.raises(ValidationFailed):
                self.ecp.resolve(REVIEWER, ref, approval_id, request)
            assert self.run(run_id) == before
            assert self.ecp.approvals.get(TENANT, approval_id) == approval
            return

        answer = self.ecp.resolve(REVIEWER, ref, approval_id, request)
        self.settled[approval_id] = ref
        resolved = answer.approval
        assert resolved.status is ApprovalStatus.RESOLVED
        assert resolved.resolution is not None
        assert resolved.resolution.decision is decision
        assert resolved.resolution.edited_payload == edited
        assert resolved.resolution.actor == REVIEWER
        assert self.ecp.approvals.get(TENANT, approval_id) == resolved
        actions = [entry.action for entry in self.ecp.approvals.actions(TENANT, approval_id)]
        expected = {"approve": "approved", "reject": "denied", "edit_and_approve": "edited"}
        assert actions[0] == "requested"
        assert actions[-1] == expected[decision]

        run = self.run(run_id)
        assert RunStatusResponse.of(run) == answer.run
        records = self.records(run_id)
        (index,) = [
            i
            for i, record in enumerate(records)
            if record.status in {AttemptStatus.APPROVED, AttemptStatus.DENIED}
            and record.execution_metadata.get("approval_id") == approval_id
        ]
        decided = records[index]
        assert decided.node_id == approval.node_id
        assert decided.attempt == before.attempts + 1
        if decision is ApprovalDecision.REJECT:
            assert decided.status is AttemptStatus.DENIED
            assert run.status is RunStatus.FAILED
            assert run.failure_state is not None
            assert run.failure_state.reason == "approval_rejected"
            assert run.failure_state.node_id == approval.node_id
            assert len(records) == index + 1
            return
        assert decided.status is AttemptStatus.APPROVED
        payload = edited if edited is not None else approval.proposed_payload
        assert decided.output_snapshot == payload
        node = GRAPHS[ref].node(approval.node_id)
        if node.kind is NodeKind.ACTION:
            # The gated action runs next, with the approved (or edited) arguments, unless the
            # policy now denies it.
            following = records[index + 1]
            assert following.node_id == node.id
            if following.status is not AttemptStatus.REJECTED:
                assert following.input_snapshot == payload
                assert following.execution_metadata["approval_id"] == approval_id
        elif ref == "refunds" and run.status is RunStatus.COMPLETED:
            # An approval node continues with the run state, or with the edited payload in its
            # place; notify then merges its echo output.
            base = edited if edited is not None else before.state
            assert run.output == {**base, "to": "customer"}

    @precondition(lambda self: self.has_runs_in(RunStatus.WAITING_INTERRUPT))
    @rule(data=st.data(), value=resume_values, and_drive=st.booleans())
    def resume_interrupt(self, data: st.DataObject, value: Any, and_drive: bool) -> None:
        run_id = data.draw(st.sampled_from(self.runs_in(RunStatus.WAITING_INTERRUPT)), label="run")
        before = self.run(run_id)
        node = GRAPHS[self.deployment_of[run_id]].node(before.next_node_id or "")
        assert node.kind is NodeKind.INTERRUPT
        run = self.ecp.runs.resume(TENANT, run_id, value)
        assert run.attempts == before.attempts + 1
        last = self.records(run_id)[-1]
        assert last.status is AttemptStatus.RESUMED
        assert last.input_snapshot == value
        written: Any = run.state
        for part in (node.target_path or node.id).split("."):
            written = written[part]
        assert written == value
        (exit_edge,) = GRAPHS[self.deployment_of[run_id]].outgoing(node.id)
        assert run.status is RunStatus.RUNNING
        assert run.next_node_id == exit_edge.target
        if and_drive:
            self.ecp.runs.drive(TENANT, run_id)

    @rule(ref=st.sampled_from(DEPLOYMENTS), denied=deny_sets)
    def put_policy(self, ref: str, denied: set[Capability]) -> None:
        before = self.ecp.graphs.policy(TENANT, ref)
        policy = self.ecp.graphs.put_policy(
            TENANT, ref, DeploymentPolicyRequest(deny_capabilities=tuple(sorted(denied)))
        )
        assert set(policy.deny_capabilities) == denied
        if before is None:
            assert policy.policy_version == 1
        elif set(before.deny_capabilities) == denied:
            assert policy == before
        else:
            assert policy.policy_id == before.policy_id
            assert policy.policy_version == before.policy_version + 1

    @rule(
        data=st.data(),
        kind=st.sampled_from(["resolve_again", "resume_not_waiting", "other_tenant"]),
        decision=st.sampled_from(list(ApprovalDecision)),
        value=resume_values,
    )
    def try_an_illegal_operation(
        self, data: st.DataObject, kind: str, decision: ApprovalDecision, value: Any
    ) -> None:
        """Each illegal call raises its error and changes nothing."""
        not_waiting = sorted(
            run_id
            for run_id, status in self.status.items()
            if status is not RunStatus.WAITING_INTERRUPT
        )
        if kind == "resolve_again" and self.settled:
            approval_id = data.draw(st.sampled_from(sorted(self.settled)), label="approval")
            self.resolve_settled_approval_again(approval_id, decision)
        elif kind == "resume_not_waiting" and not_waiting:
            run_id = data.draw(st.sampled_from(not_waiting), label="run")
            self.resume_a_run_not_waiting_for_an_interrupt(run_id, value)
        else:
            run_id = data.draw(st.sampled_from(sorted(self.status)), label="run")
            self.another_tenant_sees_nothing(run_id)

    def resolve_settled_approval_again(self, approval_id: str, decision: ApprovalDecision) -> None:
        approval = self.ecp.approvals.get(TENANT, approval_id)
        assert approval.status is not ApprovalStatus.PENDING
        run_before = self.run(approval.run_id)
        trail_before = self.ecp.approvals.actions(TENANT, approval_id)
        edited = {"x": 1} if decision is ApprovalDecision.EDIT_AND_APPROVE else None
        with pytest.raises(ApprovalAlreadyResolved):
            self.ecp.resolve(
                REVIEWER,
                self.settled[approval_id],
                approval_id,
                ApprovalResolutionRequest(decision=decision, edited_payload=edited),
            )
        assert self.ecp.approvals.get(TENANT, approval_id) == approval
        assert self.ecp.approvals.actions(TENANT, approval_id) == trail_before
        assert self.run(approval.run_id) == run_before

    def resume_a_run_not_waiting_for_an_interrupt(self, run_id: str, value: Any) -> None:
        before = self.run(run_id)
        assert before.status is not RunStatus.WAITING_INTERRUPT
        with pytest.raises(IllegalTransition):
            self.ecp.runs.resume(TENANT, run_id, value)
        assert self.run(run_id) == before

    def another_tenant_sees_nothing(self, run_id: str) -> None:
        before = self.run(run_id)
        with pytest.raises(NotFound):
            self.ecp.runs.get(INTRUDER, run_id)
        with pytest.raises(NotFound):
            self.ecp.runs.drive(INTRUDER, run_id)
        with pytest.raises(NotFound):
            self.ecp.audit.verify_run(INTRUDER, run_id)
        with pytest.raises(NotFound):
            self.ecp.audit.timeline(INTRUDER, run_id)
        with pytest.raises(NotFound):
            self.ecp.approvals.for_run(INTRUDER, run_id)
        for approval in self.ecp.approvals.for_run(TENANT, run_id):
            with pytest.raises(NotFound):
                self.ecp.approvals.get(INTRUDER, approval.approval_id)
            with pytest.raises(NotFound):
                self.ecp.resolve(
                    OUTSIDER,
                    approval.deployment_ref,
                    approval.approval_id,
                    ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE),
                )
        assert self.run(run_id) == before

    @rule(seconds=st.integers(0, 2 * PAY_SLA), escalate=st.booleans())
    def advance_clock(self, seconds: int, escalate: bool) -> None:
        before = self.clock.now()
        assert (self.clock.advance(seconds) - before).total_seconds() == seconds
        if escalate:
            self.escalate_overdue()

    def escalate_overdue(self) -> None:
        """Every pending approval past its deadline is escalated and replaced, and only those."""
        now = self.clock.now()
        overdue = {}
        for run_id in self.runs_in(RunStatus.WAITING_APPROVAL):
            (approval_id,) = self.run(run_id).pending_approval_ids
            approval = self.ecp.approvals.get(TENANT, approval_id)
            if approval.sla_deadline is not None and approval.sla_deadline < now:
                overdue[approval_id] = run_id
        created = self.ecp.approvals.escalate_overdue()
        assert sorted(a.escalated_from_id or "" for a in created) == sorted(overdue)
        for replacement in created:
            old_id = replacement.escalated_from_id
            assert old_id is not None
            run_id = overdue[old_id]
            old = self.ecp.approvals.get(TENANT, old_id)
            assert old.status is ApprovalStatus.ESCALATED
            assert old.resolution is None
            assert self.ecp.approvals.actions(TENANT, old_id)[-1].action == "escalated"
            assert replacement.status is ApprovalStatus.PENDING
            assert replacement.run_id == run_id
            assert replacement.node_id == old.node_id
            assert replacement.proposed_payload == old.proposed_payload
            assert replacement.sla_deadline is not None
            assert replacement.sla_deadline > now
            run = self.run(run_id)
            assert run.status is RunStatus.WAITING_APPROVAL
            assert run.pending_approval_ids == (replacement.approval_id,)
            self.settled[old_id] = self.deployment_of[run_id]

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def every_run_is_consistent(self) -> None:
        for run_id in sorted(self.status):
            self.check_run(run_id)

    def check_run(self, run_id: str) -> None:
        run = self.run(run_id)
        previous = self.status[run_id]
        assert run.status in set(RunStatus)
        assert run.status in REACHABLE[previous], f"{previous} -> {run.status}"
        self.status[run_id] = run.status
        graph = GRAPHS[run.deployment_ref]
        last = self.check_chain(run)
        self.check_pause(run, graph, last)
        self.check_outcome(run, graph, last)
        if run.status in {RunStatus.PENDING, RunStatus.RUNNING}:
            assert run.next_node_id is not None
        if run.status is RunStatus.PENDING:
            assert run.attempts == 0
        assert run.steps <= graph.max_steps + 1
        assert run.created_at <= run.updated_at <= self.clock.now()

    def check_chain(self, run: Run) -> NodeAuditRecord | None:
        """One record per attempt, numbered 1..n, verifying and signed; returns the last one."""
        records = self.records(run.run_id)
        assert len(records) == run.attempts
        assert [record.attempt for record in records] == list(range(1, run.attempts + 1))
        assert all(
            record.run_id == run.run_id and record.deployment_ref == run.deployment_ref
            for record in records
        )
        verification = self.ecp.audit.verify_run(TENANT, run.run_id)
        assert verification.verified, verification.error
        assert verification.record_count == run.attempts
        # With no record there is nothing signed: signature_verified is null then.
        assert verification.signature_verified is (True if records else None)
        return records[-1] if records else None

    def check_pause(self, run: Run, graph: GraphDefinition, last: NodeAuditRecord | None) -> None:
        """Exactly one pending approval while WAITING_APPROVAL, none otherwise."""
        pending = self.ecp.approvals.for_run(TENANT, run.run_id, ApprovalStatus.PENDING)
        if run.status is RunStatus.WAITING_APPROVAL:
            assert len(run.pending_approval_ids) == 1
            (approval_id,) = run.pending_approval_ids
            assert [approval.approval_id for approval in pending] == [approval_id]
            approval = self.ecp.approvals.get(TENANT, approval_id)
            assert approval.status is ApprovalStatus.PENDING
            assert approval.run_id == run.run_id
            assert run.paused is not None
            assert run.paused.approval_id == approval_id
            assert approval.node_id == run.next_node_id == run.paused.node_id
            assert last is not None
            assert last.status in (AttemptStatus.WAITING_APPROVAL, AttemptStatus.ESCALATED)
            assert last.output_snapshot == {"approval_id": approval_id}
            assert last.node_id == approval.node_id
        else:
            assert run.pending_approval_ids == ()
            assert pending == []
            assert run.paused is None
        if run.status is RunStatus.WAITING_INTERRUPT:
            assert last is not None
            assert last.status is AttemptStatus.WAITING_INTERRUPT
            assert graph.node(last.node_id).kind is NodeKind.INTERRUPT
            assert run.next_node_id == last.node_id

    def check_outcome(self, run: Run, graph: GraphDefinition, last: NodeAuditRecord | None) -> None:
        """Public status, failure shapes and output."""
        public = RunStatusResponse.of(run).status
        assert public is run.public_status
        if run.status is RunStatus.FAILED:
            self.check_failure(run, graph, last)
            assert run.output is None
            return
        assert run.failure_state is None
        assert public is not RunPublicStatus.TERMINATED_BY_POLICY
        if run.status is RunStatus.COMPLETED:
            assert run.output == run.state
            assert public is RunPublicStatus.COMPLETED
            assert last is not None
            assert last.status is AttemptStatus.SUCCEEDED
            assert graph.node(last.node_id).kind is NodeKind.END
            assert run.next_node_id is None
        else:
            assert run.output is None

    def check_failure(self, run: Run, graph: GraphDefinition, last: NodeAuditRecord | None) -> None:
        failure = run.failure_state
        assert failure is not None
        assert last is not None
        assert failure.node_id == last.node_id
        if failure.reason == "policy_violation":
            assert run.public_status is RunPublicStatus.TERMINATED_BY_POLICY
            assert last.status is AttemptStatus.REJECTED
            enforcement = last.execution_metadata["enforcement"]
            assert enforcement["decision"] == "deny"
            policy = self.ecp.graphs.policy(TENANT, run.deployment_ref)
            assert policy is not None
            assert enforcement["policy_id"] == policy.policy_id
            assert enforcement["policy_version"] <= policy.policy_version
            capabilities = {str(c) for c in graph.node(last.node_id).capabilities}
            assert enforcement["denied_capabilities"]
            assert set(enforcement["denied_capabilities"]) <= capabilities
            return
        assert run.public_status is RunPublicStatus.FAILED
        expected_status = {
            "approval_rejected": AttemptStatus.DENIED,
            "action_error": AttemptStatus.FAILED,
            "step_limit_exceeded": AttemptStatus.FAILED,
            "no_matching_edge": AttemptStatus.FAILED,
            "condition_error": AttemptStatus.FAILED,
            "mapping_error": AttemptStatus.FAILED,
        }
        assert last.status is expected_status[failure.reason]
        if failure.reason == "action_error":
            assert set(last.error) == {"type", "message"}
        if failure.reason == "step_limit_exceeded":
            assert run.steps == graph.max_steps + 1


THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"

TestRunStateMachine = RunMachine.TestCase
TestRunStateMachine.settings = settings(
    max_examples=1000 if THOROUGH else 75,
    stateful_step_count=100 if THOROUGH else 50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
"""``HYPOTHESIS_PROFILE=thorough`` runs many more and longer sequences (about two minutes)."""
