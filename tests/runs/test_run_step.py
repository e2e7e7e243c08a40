"""The run lifecycle as a pure step: properties of ``ecp_core.runs.engine.step.Stepper``.

A step reads no storage: from a run, its graph and its policy it decides the next run and the
effects, which ``ecp_core.runs.engine.lifecycle`` applies. These properties hold for every chain of
action nodes under every policy.
"""

from datetime import UTC, datetime
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.graphs import GraphBuilder, GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.approvals.effects import OpenApproval
from ecp_core.runs.approvals.model import ApprovalRecord, ApprovalResolution
from ecp_core.runs.approvals.steps import ApprovalSteps
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.run.actions import ActionContext, ActionRegistry
from ecp_core.runs.run.effects import Step, WriteAudit
from ecp_core.runs.run.events import EmitEvent
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import (
    ApprovalDecision,
    ApprovalStatus,
    AttemptStatus,
    AuthMethod,
    Capability,
    RunStatus,
)
from ecp_core.webhooks.model import WebhookEventType

pytestmark = pytest.mark.unit

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
CAPABILITIES = st.lists(st.sampled_from(list(Capability)), unique=True, max_size=3).map(tuple)


@st.composite
def chains(draw: st.DrawFn) -> GraphDefinition:
    """A chain of 1 to 6 ``count`` actions, some gated by approval, each with capabilities."""
    size = draw(st.integers(1, 6))
    builder = GraphBuilder("chain", max_steps=draw(st.integers(1, 10)))
    ids = [f"n{i}" for i in range(size)]
    for node_id in ids:
        builder.action(
            node_id,
            "count",
            capabilities=draw(CAPABILITIES),
            requires_approval=draw(st.booleans()),
        )
    builder.end()
    builder.entry(ids[0]).chain(*ids, "end")
    return builder.build()


def policies(graph: GraphDefinition) -> st.SearchStrategy[DeploymentPolicy | None]:
    """No policy, or one denying some capabilities."""
    return st.none() | CAPABILITIES.map(
        lambda denied: DeploymentPolicy(
            tenant_id="t",
            deployment_ref="d",
            policy_id="p",
            policy_version=1,
            deny_capabilities=denied,
            updated_at=EPOCH,
        )
    )


def pending_run(graph: GraphDefinition) -> Run:
    return Run(
        run_id="r",
        tenant_id="t",
        deployment_ref="d",
        graph_version_ref=f"{graph.graph_id}@1",
        thread_id="r",
        status=RunStatus.PENDING,
        state={},
        next_node_id=graph.entry,
        created_at=EPOCH,
        updated_at=EPOCH,
    )


class Counting:
    """An action registry whose ``count`` handler notes each node it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.arguments: list[dict[str, Any]] = []
        self.registry = ActionRegistry()
        self.registry.register("count", self._count)

    def _count(self, context: ActionContext) -> dict[str, Any]:
        self.ran.append(context.node_id)
        self.arguments.append(dict(context.arguments))
        return {"count": int(context.state.get("count", 0)) + 1}


def stepper(actions: ActionRegistry) -> Stepper:
    return Stepper(FixedClock(EPOCH), SequentialIds("a"), actions)


def walk(graph: GraphDefinition, policy: DeploymentPolicy | None) -> tuple[list[Step], Counting]:
    """Step a fresh run until it ends or waits, as the run service does, without storage."""
    counting = Counting()
    steps = stepper(counting.registry)
    run = pending_run(graph)
    taken = [steps.start(run)]
    run = taken[-1].run
    while run.status is RunStatus.RUNNING:
        taken.append(steps.attempt(run, graph, policy))
        run = taken[-1].run
    return taken, counting


@given(st.data())
def test_a_step_is_a_function_of_its_inputs(data: st.DataObject) -> None:
    """The same run, graph and policy (and the same clock and ids) give the same step."""
    graph = data.draw(chains())
    policy = data.draw(policies(graph))
    first, _ = walk(graph, policy)
    second, _ = walk(graph, policy)
    assert first == second


@given(st.data())
def test_every_attempt_writes_exactly_one_audit_record(data: st.DataObject) -> None:
    """Starting writes no record; every node attempt writes one, whatever it decides."""
    graph = data.draw(chains())
    steps, _ = walk(graph, data.draw(policies(graph)))
    assert steps[0].attempts == ()
    assert all(len(step.attempts) == 1 for step in steps[1:])


@given(st.data())
def test_a_denied_node_never_runs_and_ends_the_run(data: st.DataObject) -> None:
    """A node whose capability the policy denies is refused: no handler call, a REJECTED record."""
    graph = data.draw(chains())
    policy = data.draw(policies(graph))
    steps, counting = walk(graph, policy)
    denied = set() if policy is None else set(policy.deny_capabilities)
    for node_id in counting.ran:
        assert not denied & set(graph.node(node_id).capabilities)
    rejected = [a for s in steps for a in s.attempts if a.status is AttemptStatus.REJECTED]
    if rejected:
        assert steps[-1].run.status is RunStatus.FAILED
        assert rejected[-1] is steps[-1].attempts[-1]


@given(st.data())
def test_a_run_stops_only_to_wait_or_end_and_says_so_once(data: st.DataObject) -> None:
    """The walk stops at an approval (one opened, one request event) or an end (one end event)."""
    graph = data.draw(chains())
    steps, _ = walk(graph, data.draw(policies(graph)))
    last = steps[-1]
    events = [e.event for s in steps for e in s.effects if isinstance(e, EmitEvent)]
    assert events[0] is WebhookEventType.RUN_STARTED
    endings = {
        WebhookEventType.RUN_COMPLETED,
        WebhookEventType.RUN_FAILED,
        WebhookEventType.RUN_TERMINATED_BY_POLICY,
    }
    if last.run.status in TERMINAL:
        assert [e for e in events if e in endings] == [events[-1]]
    else:
        assert last.run.status is RunStatus.WAITING_APPROVAL
        assert not [e for e in events if e in endings]
        assert sum(isinstance(e, OpenApproval) for e in last.effects) == 1
        assert events[-1] is WebhookEventType.RUN_WAITING_APPROVAL


@given(st.data())
def test_the_step_bound_is_never_exceeded(data: st.DataObject) -> None:
    """No run attempts more nodes than its graph's max_steps allows before it fails."""
    graph = data.draw(chains())
    steps, counting = walk(graph, data.draw(policies(graph)))
    assert len(counting.ran) <= graph.max_steps
    assert sum(isinstance(e, WriteAudit) for s in steps for e in s.effects) <= graph.max_steps + 1


REVIEWER = ActorIdentity(subject="reviewer", auth_method=AuthMethod.BEARER, tenant_id="t")


def resolved_as(approval: ApprovalRecord, decision: ApprovalDecision, edit: int) -> ApprovalRecord:
    edited = {"edit": edit} if decision is ApprovalDecision.EDIT_AND_APPROVE else None
    resolution = ApprovalResolution(
        decision=decision, actor=REVIEWER, resolved_at=EPOCH, edited_payload=edited
    )
    return attrs.evolve(approval, status=ApprovalStatus.RESOLVED, resolution=resolution)


@given(st.data())
def test_a_gated_action_runs_only_as_the_reviewer_approved_it(data: st.DataObject) -> None:
    """A gated action runs after approval with the approved arguments; a rejection ends the run."""
    graph = data.draw(chains())
    counting = Counting()
    steps = stepper(counting.registry)
    approvals = ApprovalSteps(steps, FixedClock(EPOCH), SequentialIds("e"))
    run = steps.start(pending_run(graph)).run
    granted: dict[str, dict[str, Any]] = {}
    while run.status in {RunStatus.RUNNING, RunStatus.WAITING_APPROVAL}:
        step = steps.attempt(run, graph, None)
        if step.run.status is RunStatus.WAITING_APPROVAL:
            (opened,) = [e.approval for e in step.effects if isinstance(e, OpenApproval)]
            decision = data.draw(st.sampled_from(list(ApprovalDecision)))
            resolved = resolved_as(opened, decision, data.draw(st.integers(0, 9)))
            step = approvals.decided(step.run, graph, resolved)
            assert len(step.attempts) == 1
            if decision is ApprovalDecision.REJECT:
                assert step.attempts[0].status is AttemptStatus.DENIED
                assert step.run.status is RunStatus.FAILED
                assert step.run.failure_state is not None
                assert step.run.failure_state.reason == "approval_rejected"
            else:
                assert step.attempts[0].status is AttemptStatus.APPROVED
                assert resolved.resolution is not None
                granted[opened.node_id] = (
                    resolved.resolution.edited_payload or opened.proposed_payload or {}
                )
        run = step.run
    for node_id, arguments in zip(counting.ran, counting.arguments, strict=True):
        if graph.node(node_id).action.requires_approval:  # type: ignore[union-attr]
            assert node_id in granted
            assert arguments == granted[node_id]
