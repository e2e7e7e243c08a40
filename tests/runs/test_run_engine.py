"""Example tests of run behaviour as the service's rules state it.

Every test builds a fresh in-memory ``Ecp`` on a FixedClock and SequentialIds, so ids and times are
deterministic.
"""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

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
    structure,
)
from ecp_core.audit.record import NodeAuditRecord
from ecp_core.demo import EXAMPLE_GRAPH
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
    graph_digest,
)
from ecp_core.runs.run.model import Run
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import ApprovalStatus, AttemptStatus, NodeKind

pytestmark = pytest.mark.unit

TENANT = "acme"
OTHER_TENANT = "globex"
EPOCH = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SIGNER = Ed25519Signer.generate()

REVIEWER = ActorIdentity(
    subject="reviewer@example.com",
    auth_method=AuthMethod.BEARER,
    roles=(ServiceRole.APPROVER,),
    tenant_id=TENANT,
)
OUTSIDER = ActorIdentity(
    subject="reviewer@globex.example",
    auth_method=AuthMethod.BEARER,
    roles=(ServiceRole.APPROVER,),
    tenant_id=OTHER_TENANT,
)

CONTRACT_GRAPH: dict[str, Any] = EXAMPLE_GRAPH
"""The example graph of ``ecp_core.demo``, verbatim."""


def contract_graph() -> GraphDefinition:
    graph: GraphDefinition = structure(CONTRACT_GRAPH, GraphDefinition)
    return graph


class World:
    """One in-memory Ecp with its clock, plus shortcuts for the common steps."""

    def __init__(self) -> None:
        self.clock = FixedClock(EPOCH)
        self.ecp = Ecp.in_memory(signer=SIGNER, clock=self.clock, ids=SequentialIds("t"))

    def deploy(self, graph: GraphDefinition, ref: str | None = None) -> str:
        ref = ref or graph.graph_id
        self.ecp.graphs.register(TENANT, graph)
        self.ecp.graphs.deploy(
            TENANT, CreateDeploymentRequest(deployment_ref=ref, graph_id=graph.graph_id)
        )
        return ref

    def start(self, ref: str, payload: dict[str, Any] | None = None, **options: Any) -> Run:
        run, created = self.ecp.runs.start(
            TENANT, StartRunRequest(deployment_ref=ref, input=payload or {}, **options)
        )
        assert created
        return run

    def start_and_drive(self, ref: str, payload: dict[str, Any] | None = None) -> Run:
        run = self.start(ref, payload)
        return self.ecp.runs.drive(TENANT, run.run_id)

    def resolve(
        self,
        ref: str,
        approval_id: str,
        decision: ApprovalDecision,
        edited: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> Run:
        answer = self.ecp.resolve(
            REVIEWER,
            ref,
            approval_id,
            ApprovalResolutionRequest(decision=decision, edited_payload=edited, reason=reason),
        )
        return self.run(answer.run.run_id)

    def run(self, run_id: str) -> Run:
        return self.ecp.runs.get(TENANT, run_id)

    def records(self, run_id: str) -> tuple[NodeAuditRecord, ...]:
        return self.ecp.audit.timeline(TENANT, run_id).entries

    def assert_chain_ok(self, run: Run) -> None:
        records = self.records(run.run_id)
        assert len(records) == run.attempts
        assert [record.attempt for record in records] == list(range(1, run.attempts + 1))
        verification = self.ecp.audit.verify_run(TENANT, run.run_id)
        assert verification.verified, verification.error
        assert verification.signature_verified is True
        assert verification.record_count == run.attempts


def trail(records: tuple[NodeAuditRecord, ...]) -> list[tuple[str, AttemptStatus]]:
    return [(record.node_id, record.status) for record in records]


@pytest.fixture
def world() -> World:
    return World()


# -- the CONTRACT example --------------------------------------------------------------------------


@pytest.mark.spec("C3 graph-registration")
def test_builder_and_declarative_json_produce_the_same_graph(world: World) -> None:
    built = (
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
    assert graph_digest(built) == graph_digest(contract_graph())
    first = world.ecp.graphs.register(TENANT, contract_graph())
    again = world.ecp.graphs.register(TENANT, built)
    assert (first.created, again.created) == (True, False)
    assert again.version == first.version == 1


@pytest.mark.spec("§3.1 approval-pauses-run", "§3.1 approve-continues-run")
def test_contract_example_runs_pending_waiting_approval_completed(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    run = world.start(ref, {"order": "A-1001"})
    assert run.status is RunStatus.PENDING
    assert run.public_status is RunPublicStatus.PENDING
    assert run.attempts == 0

    run = world.ecp.runs.drive(TENANT, run.run_id)
    assert run.public_status is RunPublicStatus.WAITING_APPROVAL
    assert len(run.pending_approval_ids) == 1
    approval = world.ecp.approvals.get(TENANT, run.pending_approval_ids[0])
    assert approval.status is ApprovalStatus.PENDING
    assert approval.node_id == "review"
    assert approval.summary == "Approve the refund"
    assert approval.proposed_payload == {"order": "A-1001", "category": "refund"}
    assert approval.graph_version_ref == "refund-triage@1"

    answer = world.ecp.resolve(
        REVIEWER,
        ref,
        approval.approval_id,
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, reason="Looks right"),
    )
    assert answer.approval.status is ApprovalStatus.RESOLVED
    assert answer.run.status is RunPublicStatus.COMPLETED
    assert answer.run.pending_approval_ids == ()
    run = world.run(run.run_id)
    assert run.status is RunStatus.COMPLETED
    assert run.output == run.state == {"order": "A-1001", "category": "refund", "to": "customer"}
    assert RunStatusResponse.of(run) == answer.run

    records = world.records(run.run_id)
    assert trail(records) == [
        ("classify", AttemptStatus.SUCCEEDED),
        ("review", AttemptStatus.WAITING_APPROVAL),
        ("review", AttemptStatus.APPROVED),
        ("notify", AttemptStatus.SUCCEEDED),
        ("done", AttemptStatus.SUCCEEDED),
    ]
    assert [r.previous_record_digest for r in records[1:]] == [
        r.record_digest for r in records[:-1]
    ]
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 reject-fails-run", "§3.1 resolution-stored")
def test_reject_fails_the_run_with_approval_rejected(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    run = world.start_and_drive(ref, {"order": "A-1002"})
    approval_id = run.pending_approval_ids[0]

    run = world.resolve(ref, approval_id, ApprovalDecision.REJECT, reason="Not a refund")
    assert run.status is RunStatus.FAILED
    assert run.public_status is RunPublicStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "approval_rejected"
    assert run.failure_state.node_id == "review"
    assert run.pending_approval_ids == ()
    assert run.output is None
    approval = world.ecp.approvals.get(TENANT, approval_id)
    assert approval.status is ApprovalStatus.RESOLVED
    assert approval.resolution is not None
    assert approval.resolution.decision is ApprovalDecision.REJECT
    assert approval.resolution.reason == "Not a refund"
    assert trail(world.records(run.run_id))[-1] == ("review", AttemptStatus.DENIED)
    world.assert_chain_ok(run)


# -- approvals -------------------------------------------------------------------------------------


def gated_payment_graph(**approval: Any) -> GraphDefinition:
    """An echo action gated by its own approval (``requires_approval``)."""
    action = ActionDescriptorV1(
        name="echo",
        fingerprint="echo/1",
        arguments={"amount": 10, "currency": "EUR"},
        requires_approval=True,
    )
    return (
        GraphBuilder("payment")
        .node(NodeDefinition(id="pay", kind=NodeKind.ACTION, action=action, **approval))
        .end("done")
        .edge("pay", "done")
        .build()
    )


@pytest.mark.spec("C3 approval-gated-action", "§3.1 resolution-stored")
def test_edit_and_approve_runs_the_action_with_the_edited_arguments(world: World) -> None:
    ref = world.deploy(gated_payment_graph())
    run = world.start_and_drive(ref, {"invoice": "I-7"})
    assert run.status is RunStatus.WAITING_APPROVAL
    approval = world.ecp.approvals.get(TENANT, run.pending_approval_ids[0])
    assert approval.node_id == "pay"
    assert approval.proposed_payload == {"amount": 10, "currency": "EUR"}
    assert trail(world.records(run.run_id)) == [("pay", AttemptStatus.WAITING_APPROVAL)]

    edited = {"amount": 7, "currency": "EUR", "memo": "partial"}
    run = world.resolve(ref, approval.approval_id, ApprovalDecision.EDIT_AND_APPROVE, edited)
    assert run.status is RunStatus.COMPLETED
    assert run.output == {"invoice": "I-7", **edited}

    records = world.records(run.run_id)
    assert trail(records) == [
        ("pay", AttemptStatus.WAITING_APPROVAL),
        ("pay", AttemptStatus.APPROVED),
        ("pay", AttemptStatus.SUCCEEDED),
        ("done", AttemptStatus.SUCCEEDED),
    ]
    executed = records[2]
    assert executed.input_snapshot == edited
    assert executed.output_snapshot == edited
    assert executed.execution_metadata["approval_id"] == approval.approval_id
    resolution = world.ecp.approvals.get(TENANT, approval.approval_id).resolution
    assert resolution is not None
    assert resolution.edited_payload == edited
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 edit-needs-payload")
def test_edit_and_approve_requires_an_edited_payload(world: World) -> None:
    ref = world.deploy(gated_payment_graph())
    run = world.start_and_drive(ref)
    approval_id = run.pending_approval_ids[0]
    with pytest.raises(ValidationFailed) as missing:
        world.resolve(ref, approval_id, ApprovalDecision.EDIT_AND_APPROVE)
    assert [error.loc for error in missing.value.errors] == [("edited_payload",)]
    with pytest.raises(ValidationFailed) as extra:
        world.resolve(ref, approval_id, ApprovalDecision.APPROVE, {"amount": 1})
    assert [error.loc for error in extra.value.errors] == [("edited_payload",)]

    assert world.ecp.approvals.get(TENANT, approval_id).status is ApprovalStatus.PENDING
    unchanged = world.run(run.run_id)
    assert unchanged.status is RunStatus.WAITING_APPROVAL
    assert unchanged.attempts == run.attempts
    run = world.resolve(ref, approval_id, ApprovalDecision.APPROVE)
    assert run.status is RunStatus.COMPLETED
    assert world.records(run.run_id)[2].input_snapshot == {"amount": 10, "currency": "EUR"}


@pytest.mark.spec("§2.2 approval-record")
def test_a_decision_outside_allowed_actions_is_refused(world: World) -> None:
    graph = (
        GraphBuilder("strict-review")
        .approval(
            "review",
            summary="Approve",
            rationale="Because",
            allowed_actions=(ApprovalDecision.APPROVE, ApprovalDecision.REJECT),
        )
        .end("done")
        .chain("review", "done")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"x": 1})
    approval_id = run.pending_approval_ids[0]
    approval = world.ecp.approvals.get(TENANT, approval_id)
    assert approval.allowed_actions == (ApprovalDecision.APPROVE, ApprovalDecision.REJECT)

    with pytest.raises(ValidationFailed) as refused:
        world.resolve(ref, approval_id, ApprovalDecision.EDIT_AND_APPROVE, {"x": 2})
    assert ("decision",) in [error.loc for error in refused.value.errors]
    assert world.ecp.approvals.get(TENANT, approval_id).status is ApprovalStatus.PENDING
    assert world.ecp.approvals.actions(TENANT, approval_id)[-1].action == "requested"
    assert world.run(run.run_id).attempts == run.attempts
    assert world.resolve(ref, approval_id, ApprovalDecision.APPROVE).output == {"x": 1}


@pytest.mark.spec("C3 second-resolve-409")
@pytest.mark.parametrize("first", list(ApprovalDecision))
def test_a_second_resolve_is_approval_already_resolved(
    world: World, first: ApprovalDecision
) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    run = world.start_and_drive(ref)
    approval_id = run.pending_approval_ids[0]
    edited = {"category": "refund"} if first is ApprovalDecision.EDIT_AND_APPROVE else None
    run = world.resolve(ref, approval_id, first, edited)
    attempts = run.attempts

    for again in ApprovalDecision:
        with pytest.raises(ApprovalAlreadyResolved) as raised:
            world.resolve(
                ref,
                approval_id,
                again,
                {"x": 1} if again is ApprovalDecision.EDIT_AND_APPROVE else None,
            )
        assert isinstance(raised.value, Conflict)
        assert raised.value.code == "approval_already_resolved"
    assert world.run(run.run_id).attempts == attempts
    resolution = world.ecp.approvals.get(TENANT, approval_id).resolution
    assert resolution is not None
    assert resolution.decision is first


@pytest.mark.spec("§6.2 approval-action-per-action", "§2.2 approval-action-record")
@pytest.mark.parametrize(
    ("decision", "edited", "action"),
    [
        (ApprovalDecision.APPROVE, None, "approved"),
        (ApprovalDecision.REJECT, None, "denied"),
        (ApprovalDecision.EDIT_AND_APPROVE, {"category": "refund", "note": "checked"}, "edited"),
    ],
)
def test_approval_action_trail(
    world: World, decision: ApprovalDecision, edited: dict[str, Any] | None, action: str
) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    run = world.start_and_drive(ref)
    approval_id = run.pending_approval_ids[0]
    requested = world.ecp.approvals.actions(TENANT, approval_id)
    assert [entry.action for entry in requested] == ["requested"]
    assert requested[0].occurred_at == EPOCH

    world.clock.advance(5)
    world.resolve(ref, approval_id, decision, edited, reason="checked by hand")
    entries = world.ecp.approvals.actions(TENANT, approval_id)
    assert [entry.action for entry in entries] == ["requested", action]
    assert all(entry.approval_id == approval_id for entry in entries)
    assert entries[1].actor == REVIEWER
    assert entries[1].metadata == {"reason": "checked by hand"}
    assert entries[1].occurred_at > entries[0].occurred_at


# -- policies --------------------------------------------------------------------------------------


@pytest.mark.spec("§3.1 policy-denial", "§6.2 audit-per-attempt")
def test_policy_denial_terminates_the_run_by_policy(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    policy = world.ecp.graphs.put_policy(
        TENANT, ref, DeploymentPolicyRequest(deny_capabilities=(Capability.NETWORK_WRITE,))
    )
    run = world.start_and_drive(ref, {"order": "A-9"})
    assert run.status is RunStatus.WAITING_APPROVAL
    run = world.resolve(ref, run.pending_approval_ids[0], ApprovalDecision.APPROVE)

    assert run.status is RunStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "policy_violation"
    assert run.failure_state.node_id == "notify"
    assert run.public_status is RunPublicStatus.TERMINATED_BY_POLICY
    assert RunStatusResponse.of(run).status is RunPublicStatus.TERMINATED_BY_POLICY
    assert RunPublicStatus.TERMINATED_BY_POLICY.value == "terminated_by_policy"

    records = world.records(run.run_id)
    last = records[-1]
    assert trail(records)[-1] == ("notify", AttemptStatus.REJECTED)
    enforcement = last.execution_metadata["enforcement"]
    assert set(enforcement) == {
        "decision",
        "reason",
        "policy_id",
        "policy_version",
        "denied_capabilities",
    }
    assert enforcement["decision"] == "deny"
    assert enforcement["reason"]
    assert enforcement["policy_id"] == policy.policy_id
    assert enforcement["policy_version"] == policy.policy_version == 1
    assert enforcement["denied_capabilities"] == ["network_write"]
    assert last.input_snapshot == {"to": "customer"}
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 deployment-policy")
def test_a_policy_change_bumps_the_version_and_lifting_it_lets_runs_through(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    deny = DeploymentPolicyRequest(deny_capabilities=(Capability.NETWORK_WRITE,))
    first = world.ecp.graphs.put_policy(TENANT, ref, deny)
    assert world.ecp.graphs.put_policy(TENANT, ref, deny) == first
    lifted = world.ecp.graphs.put_policy(TENANT, ref, DeploymentPolicyRequest())
    assert (lifted.policy_id, lifted.policy_version) == (first.policy_id, 2)

    run = world.start_and_drive(ref)
    run = world.resolve(ref, run.pending_approval_ids[0], ApprovalDecision.APPROVE)
    assert run.status is RunStatus.COMPLETED


@pytest.mark.spec("C3 deployment-policy")
def test_policy_is_checked_before_a_gated_action_asks_for_approval(world: World) -> None:
    action = ActionDescriptorV1(
        name="echo",
        fingerprint="echo/1",
        arguments={"url": "https://example.com"},
        capability_refs=(Capability.EXTERNAL_API_CALL,),
        requires_approval=True,
    )
    graph = GraphBuilder("call").node(
        NodeDefinition(id="call", kind=NodeKind.ACTION, action=action)
    )
    ref = world.deploy(graph.build())
    world.ecp.graphs.put_policy(
        TENANT, ref, DeploymentPolicyRequest(deny_capabilities=(Capability.EXTERNAL_API_CALL,))
    )
    run = world.start_and_drive(ref)
    assert run.public_status is RunPublicStatus.TERMINATED_BY_POLICY
    assert world.ecp.approvals.for_run(TENANT, run.run_id) == []
    assert trail(world.records(run.run_id)) == [("call", AttemptStatus.REJECTED)]


# -- actions ---------------------------------------------------------------------------------------


@pytest.mark.spec("C3 run-failures")
def test_a_handler_exception_fails_the_run_with_action_error(world: World) -> None:
    def explode(context: ActionContext) -> dict[str, Any]:
        raise RuntimeError(f"ledger unavailable for {context.node_id}")

    world.ecp.actions.register("explode", explode)
    graph = (
        GraphBuilder("fragile")
        .action("post", "explode", arguments={"ledger": "main"})
        .end("done")
        .chain("post", "done")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"k": "v"})

    assert run.status is RunStatus.FAILED
    assert run.public_status is RunPublicStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "action_error"
    assert run.failure_state.node_id == "post"
    assert run.state == {"k": "v"}
    (record,) = world.records(run.run_id)
    assert record.status is AttemptStatus.FAILED
    assert record.error == {"type": "RuntimeError", "message": "ledger unavailable for post"}
    assert record.input_snapshot == {"ledger": "main"}
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 run-failures")
@pytest.mark.parametrize(
    ("handler", "error_type"),
    [
        (lambda context: ["not", "an", "object"], "TypeError"),
        (lambda context: {"not_json": float("nan")}, "NotCanonicalizable"),
    ],
)
def test_a_handler_returning_a_bad_output_fails_with_action_error(
    world: World, handler: Callable[[ActionContext], Any], error_type: str
) -> None:
    world.ecp.actions.register("bad", handler)
    ref = world.deploy(GraphBuilder("bad-output").action("a", "bad").build())
    run = world.start_and_drive(ref)
    assert run.failure_state is not None
    assert run.failure_state.reason == "action_error"
    assert world.records(run.run_id)[-1].error["type"] == error_type
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 run-failures")
def test_an_unregistered_action_fails_with_action_error(world: World) -> None:
    ref = world.deploy(GraphBuilder("unknown").action("a", "no-such-action").build())
    run = world.start_and_drive(ref)
    assert run.failure_state is not None
    assert run.failure_state.reason == "action_error"
    assert world.records(run.run_id)[-1].error["type"] == "UnknownAction"


# -- interrupts ------------------------------------------------------------------------------------


@pytest.mark.spec("C3 interrupt-resume", "C3 run-state")
def test_interrupt_and_resume_write_the_value_at_target_path(world: World) -> None:
    graph = (
        GraphBuilder("ask")
        .interrupt("ask", target_path="customer.answer", prompt="Is the address right?")
        .end("done")
        .chain("ask", "done")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"customer": {"id": 7}})
    assert run.status is RunStatus.WAITING_INTERRUPT
    assert run.public_status is RunPublicStatus.WAITING_INTERRUPT
    assert run.pending_approval_ids == ()

    resumed = world.ecp.runs.resume(TENANT, run.run_id, {"confirmed": True})
    assert resumed.status is RunStatus.RUNNING
    run = world.ecp.runs.drive(TENANT, run.run_id)
    assert run.status is RunStatus.COMPLETED
    assert run.output == {"customer": {"id": 7, "answer": {"confirmed": True}}}

    records = world.records(run.run_id)
    assert trail(records) == [
        ("ask", AttemptStatus.WAITING_INTERRUPT),
        ("ask", AttemptStatus.RESUMED),
        ("done", AttemptStatus.SUCCEEDED),
    ]
    assert records[0].execution_metadata["prompt"] == "Is the address right?"
    assert records[1].input_snapshot == {"confirmed": True}
    assert records[1].output_snapshot == {"customer.answer": {"confirmed": True}}
    world.assert_chain_ok(run)

    with pytest.raises(IllegalTransition):
        world.ecp.runs.resume(TENANT, run.run_id, "again")


@pytest.mark.spec("C3 interrupt-resume")
def test_an_interrupt_without_target_path_writes_at_its_node_id(world: World) -> None:
    graph = GraphBuilder("ask").interrupt("answer").end("done").chain("answer", "done").build()
    ref = world.deploy(graph)
    run = world.start_and_drive(ref)
    world.ecp.runs.resume(TENANT, run.run_id, 42)
    assert world.ecp.runs.drive(TENANT, run.run_id).output == {"answer": 42}


@pytest.mark.spec("C3 interrupt-resume")
def test_resume_is_refused_unless_the_run_waits_for_an_interrupt(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    pending = world.start(ref)
    with pytest.raises(IllegalTransition):
        world.ecp.runs.resume(TENANT, pending.run_id, 1)
    waiting = world.ecp.runs.drive(TENANT, pending.run_id)
    assert waiting.status is RunStatus.WAITING_APPROVAL
    with pytest.raises(IllegalTransition) as raised:
        world.ecp.runs.resume(TENANT, waiting.run_id, 1)
    assert raised.value.code == "illegal_transition"
    assert world.run(waiting.run_id) == waiting


# -- mapping and edges -----------------------------------------------------------------------------


@pytest.mark.spec("§2.1 constant-mapping", "C3 run-state")
def test_mapping_constant_and_copy_operations(world: World) -> None:
    graph = (
        GraphBuilder("shape")
        .mapping(
            "shape",
            ConstantMappingOperation(target_path="meta.source", value={"kind": "import"}),
            CopyMappingOperation(source_path="customer.email", target_path="contact.email"),
            ConstantMappingOperation(target_path="customer", value="replaced"),
        )
        .end("done")
        .chain("shape", "done")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"customer": {"email": "a@example.com"}, "meta": 3})
    assert run.status is RunStatus.COMPLETED
    assert run.output == {
        "customer": "replaced",
        "meta": {"source": {"kind": "import"}},
        "contact": {"email": "a@example.com"},
    }
    record = world.records(run.run_id)[0]
    assert record.output_snapshot == {
        "meta.source": {"kind": "import"},
        "contact.email": "a@example.com",
        "customer": "replaced",
    }
    assert [op["operation"] for op in record.input_snapshot] == ["constant", "copy", "constant"]


@pytest.mark.spec("C3 run-failures")
def test_mapping_copy_from_a_missing_path_fails_with_mapping_error(world: World) -> None:
    graph = (
        GraphBuilder("shape")
        .mapping("shape", CopyMappingOperation(source_path="missing.path", target_path="x"))
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"missing": {}})
    assert run.failure_state is not None
    assert run.failure_state.reason == "mapping_error"
    assert world.records(run.run_id)[-1].status is AttemptStatus.FAILED


def routing_graph() -> GraphDefinition:
    return (
        GraphBuilder("route")
        .action("classify", "echo", arguments={"seen": True})
        .action("big", "set", arguments={"values": {"route": "big"}})
        .action("small", "set", arguments={"values": {"route": "small"}})
        .end("done")
        .edge("classify", "big", when="state.amount > 100")
        .edge("classify", "small", when="state.amount <= 100")
        .edge("big", "done")
        .edge("small", "done")
        .build()
    )


@pytest.mark.spec("C3 cel-conditions")
@pytest.mark.parametrize(
    ("amount", "route"), [(500, "big"), (101, "big"), (100, "small"), (-3, "small")]
)
def test_a_cel_condition_routes_between_two_edges(world: World, amount: int, route: str) -> None:
    ref = world.deploy(routing_graph())
    run = world.start_and_drive(ref, {"amount": amount})
    assert run.status is RunStatus.COMPLETED
    assert run.output == {"amount": amount, "seen": True, "route": route}
    records = world.records(run.run_id)
    assert [r.node_id for r in records] == ["classify", route, "done"]
    assert records[0].execution_metadata["next_node_id"] == route


@pytest.mark.spec("C3 run-failures")
def test_no_matching_edge_fails_the_run(world: World) -> None:
    graph = (
        GraphBuilder("narrow")
        .action("classify", "echo")
        .end("yes")
        .edge("classify", "yes", when="state.answer == 'yes'")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"answer": "no"})
    assert run.status is RunStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "no_matching_edge"
    assert run.failure_state.node_id == "classify"
    record = world.records(run.run_id)[-1]
    assert record.status is AttemptStatus.FAILED
    assert record.error["type"] == "NoMatchingEdge"
    world.assert_chain_ok(run)


@pytest.mark.spec("C3 cel-conditions")
def test_a_condition_on_a_missing_field_fails_with_condition_error(world: World) -> None:
    graph = (
        GraphBuilder("narrow")
        .action("classify", "echo")
        .end("yes")
        .edge("classify", "yes", when="state.answer == 'yes'")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref)
    assert run.failure_state is not None
    assert run.failure_state.reason == "condition_error"


@pytest.mark.spec("§2.1 condition")
def test_a_cycle_with_allow_cycle_traversal_stops_at_max_steps(world: World) -> None:
    graph = (
        GraphBuilder("spin", max_steps=5)
        .action("tick", "set", arguments={"values": {"ticked": True}})
        .mapping("tock", ConstantMappingOperation(target_path="tocked", value=True))
        .edge("tick", "tock")
        .edge("tock", "tick", when=Condition(expression="true", allow_cycle_traversal=True))
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref)
    assert run.status is RunStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "step_limit_exceeded"
    assert run.steps == 6
    records = world.records(run.run_id)
    assert len(records) == 6
    assert [r.node_id for r in records] == ["tick", "tock", "tick", "tock", "tick", "tock"]
    assert [r.status for r in records[:5]] == [AttemptStatus.SUCCEEDED] * 5
    assert records[-1].status is AttemptStatus.FAILED
    world.assert_chain_ok(run)


@pytest.mark.spec("§2.1 condition", "C3 graph-validation")
def test_a_cycle_without_allow_cycle_traversal_is_rejected() -> None:
    builder = (
        GraphBuilder("spin")
        .action("tick", "echo")
        .action("tock", "echo")
        .edge("tick", "tock")
        .edge("tock", "tick", when="true")
    )
    with pytest.raises(ValidationFailed):
        builder.build()


# -- escalation ------------------------------------------------------------------------------------


@pytest.mark.spec("C3 approval-escalation")
def test_an_overdue_approval_is_escalated_and_replaced(world: World) -> None:
    graph = (
        GraphBuilder("sla")
        .approval("review", summary="Approve", rationale="Because", sla_seconds=60)
        .end("done")
        .chain("review", "done")
        .build()
    )
    ref = world.deploy(graph)
    run = world.start_and_drive(ref, {"order": "B-1"})
    first = world.ecp.approvals.get(TENANT, run.pending_approval_ids[0])
    assert first.sla_deadline == EPOCH + timedelta(seconds=60)

    world.clock.advance(60)
    assert world.ecp.approvals.escalate_overdue() == []
    world.clock.advance(1)
    (replacement,) = world.ecp.approvals.escalate_overdue()

    assert replacement.escalated_from_id == first.approval_id
    assert replacement.status is ApprovalStatus.PENDING
    assert replacement.approval_id != first.approval_id
    assert replacement.proposed_payload == first.proposed_payload
    assert replacement.sla_deadline == world.clock.now() + timedelta(seconds=60)
    escalated = world.ecp.approvals.get(TENANT, first.approval_id)
    assert escalated.status is ApprovalStatus.ESCALATED
    assert escalated.resolution is None

    run_after = world.run(run.run_id)
    assert run_after.status is RunStatus.WAITING_APPROVAL
    assert run_after.pending_approval_ids == (replacement.approval_id,)
    assert run_after.attempts == run.attempts + 1
    escalation = world.ecp.audit.timeline(TENANT, run.run_id).entries[-1]
    assert escalation.status.value == "escalated"
    assert escalation.input_snapshot == {"escalated_from_id": first.approval_id}
    assert escalation.output_snapshot == {"approval_id": replacement.approval_id}
    pending = world.ecp.approvals.for_run(TENANT, run.run_id, ApprovalStatus.PENDING)
    assert [a.approval_id for a in pending] == [replacement.approval_id]
    assert [a.action for a in world.ecp.approvals.actions(TENANT, first.approval_id)] == [
        "requested",
        "escalated",
    ]
    (requested,) = world.ecp.approvals.actions(TENANT, replacement.approval_id)
    assert requested.action == "requested"
    assert requested.metadata == {"escalated_from_id": first.approval_id}

    with pytest.raises(ApprovalAlreadyResolved):
        world.resolve(ref, first.approval_id, ApprovalDecision.APPROVE)
    assert world.ecp.approvals.escalate_overdue() == []
    run = world.resolve(ref, replacement.approval_id, ApprovalDecision.APPROVE)
    assert run.status is RunStatus.COMPLETED
    world.assert_chain_ok(run)


# -- idempotency and tenancy -----------------------------------------------------------------------


@pytest.mark.spec("C3 run-idempotency")
def test_an_idempotency_key_returns_the_same_run(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    request = StartRunRequest(deployment_ref=ref, input={"order": "C-1"}, idempotency_key="k-1")
    first, created = world.ecp.runs.start(TENANT, request)
    assert created
    world.ecp.runs.drive(TENANT, first.run_id)
    again, created_again = world.ecp.runs.start(TENANT, request)
    assert not created_again
    assert again.run_id == first.run_id
    assert again.status is RunStatus.WAITING_APPROVAL

    for changed in (
        StartRunRequest(deployment_ref=ref, input={"order": "C-2"}, idempotency_key="k-1"),
        StartRunRequest(
            deployment_ref=ref, input={"order": "C-1"}, thread_id="t-9", idempotency_key="k-1"
        ),
    ):
        with pytest.raises(Conflict) as raised:
            world.ecp.runs.start(TENANT, changed)
        assert raised.value.code == "conflict"
    assert world.ecp.runs.page(TENANT)[1] == 1


@pytest.mark.spec("§5 tenant-isolation")
def test_another_tenant_gets_not_found(world: World) -> None:
    ref = world.deploy(contract_graph(), "refunds")
    run = world.start_and_drive(ref)
    approval_id = run.pending_approval_ids[0]

    attempts: list[Callable[[], object]] = [
        lambda: world.ecp.runs.get(OTHER_TENANT, run.run_id),
        lambda: world.ecp.runs.drive(OTHER_TENANT, run.run_id),
        lambda: world.ecp.runs.advance(OTHER_TENANT, run.run_id),
        lambda: world.ecp.runs.resume(OTHER_TENANT, run.run_id, 1),
        lambda: world.ecp.approvals.get(OTHER_TENANT, approval_id),
        lambda: world.ecp.approvals.for_run(OTHER_TENANT, run.run_id),
        lambda: world.ecp.resolve(
            OUTSIDER, ref, approval_id, ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
        ),
        lambda: world.ecp.audit.timeline(OTHER_TENANT, run.run_id),
        lambda: world.ecp.audit.verify_run(OTHER_TENANT, run.run_id),
        lambda: world.ecp.audit.records(OTHER_TENANT, ref),
        lambda: world.ecp.audit.verify_deployment(OTHER_TENANT, ref),
        lambda: world.ecp.runs.start(OTHER_TENANT, StartRunRequest(deployment_ref=ref)),
    ]
    for attempt in attempts:
        with pytest.raises(NotFound):
            attempt()
    assert world.ecp.runs.page(OTHER_TENANT)[:2] == ([], 0)
    try:
        leaked = world.ecp.approvals.actions(OTHER_TENANT, approval_id)
    except NotFound:
        leaked = []
    assert leaked == []

    assert world.run(run.run_id) == run
    assert world.ecp.approvals.get(TENANT, approval_id).status is ApprovalStatus.PENDING
