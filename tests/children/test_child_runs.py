"""Child runs (``kind: "subgraph"``) on the memory store, through the ``Ecp`` facade (ADR 0046).

A subgraph node starts a child run of another deployment and the parent waits in
``waiting_child``; the child's end writes one record in the parent's chain naming the child, and
the parent moves on or fails with ``child_failed``. Each run keeps its own chain. Policy and
approval act on the node before the child starts; depth and missing deployments fail the node.
"""

import hashlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.child_runs import ACTOR, TENANT, World, calling, leaf, subgraph_records

from ecp_core.canonical import canonical_json
from ecp_core.errors import NotFound, ValidationFailed
from ecp_core.graphs import GraphBuilder, graph_errors
from ecp_core.graphs.definition import (
    ConstantMappingOperation,
    CopyMappingOperation,
    GraphDefinition,
    NodeDefinition,
    SubgraphCall,
    graph_digest,
)
from ecp_core.policies.model import DeploymentPolicyRequest
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.runs.children.start import MAX_CHILD_DEPTH
from ecp_core.types import (
    ApprovalDecision,
    AttemptStatus,
    Capability,
    NodeKind,
    RunStatus,
)
from ecp_core.wire import unstructure

pytestmark = pytest.mark.unit

# -- the graph ------------------------------------------------------------------------------------


@pytest.mark.spec("§2.1 subgraph-node")
def test_a_subgraph_node_needs_its_call_and_takes_nothing_of_an_action() -> None:
    """Validation: the call is required on a subgraph node and refused elsewhere."""
    bare = GraphDefinition(
        graph_id="g", entry="s", nodes=(NodeDefinition(id="s", kind=NodeKind.SUBGRAPH),)
    )
    assert [e.loc for e in graph_errors(bare)] == [("nodes", 0, "subgraph")]
    call = SubgraphCall(deployment_ref="d")
    misplaced = GraphDefinition(
        graph_id="g", entry="e", nodes=(NodeDefinition(id="e", kind=NodeKind.END, subgraph=call),)
    )
    assert [e.loc for e in graph_errors(misplaced)] == [("nodes", 0, "subgraph")]
    summary = NodeDefinition(id="s", kind=NodeKind.SUBGRAPH, subgraph=call, sla_seconds=60)
    ungated = GraphDefinition(graph_id="g", entry="s", nodes=(summary,))
    assert [e.loc for e in graph_errors(ungated)] == [("nodes", 0, "sla_seconds")]
    gated = SubgraphCall(deployment_ref="d", requires_approval=True)
    fine = GraphDefinition(
        graph_id="g",
        entry="s",
        nodes=(
            NodeDefinition(
                id="s", kind=NodeKind.SUBGRAPH, subgraph=gated, sla_seconds=60, target_path="out.x"
            ),
        ),
    )
    assert graph_errors(fine) == []


def test_the_digest_of_a_graph_without_subgraph_nodes_is_unchanged() -> None:
    """An unset ``subgraph`` field is left out of the digest, like the task node fields."""
    graph = leaf()
    assert graph_digest(graph) == "sha256:" + _old_digest(graph)
    assert graph_digest(calling("p", "leaf")) != graph_digest(calling("p", "other"))


def _old_digest(graph: GraphDefinition) -> str:
    """The digest as computed before ``subgraph`` existed (the node fields then known).

    The approval rules (ADR 0075) and the wait node's fields (ADR 0078) came later still, and
    are left out when unset like it.
    """
    data = unstructure(graph)
    rules = ("min_approvals", "forbid_self_approval", "approver_roles", "approver_subjects")
    later = (*rules, "seconds", "until_path")
    for node in data["nodes"]:
        for field in ("lock_seconds", "max_attempts", "subgraph", *later):
            assert node.pop(field, None) is None
    return hashlib.sha256(canonical_json(data)).hexdigest()


# -- running ----------------------------------------------------------------------------------------


@pytest.mark.spec("§2.1 subgraph-node", "§2.1 child-run-summary")
def test_parent_child_grandchild_complete_each_on_its_own_chain() -> None:
    """The output flows up at each ``target_path``; each parent record names its child."""
    world = World()
    world.deploy("leaf", leaf())
    copy_x = (CopyMappingOperation(source_path="order.x", target_path="x"),)
    world.deploy("mid", calling("mid", "leaf", input=copy_x))
    world.deploy("top", calling("top", "mid", target_path="result.mid"))
    top = world.run_to_rest("top", {"order": {"x": 7}})
    assert top.status is RunStatus.COMPLETED
    assert top.output == {
        "order": {"x": 7},
        "result": {"mid": {"order": {"x": 7}, "call": {"x": 7, "leaf": "done"}}},
    }
    (mid,) = world.children(top.run_id)
    (grandchild,) = world.children(mid.run_id)
    assert world.children(grandchild.run_id) == []
    for child, parent in ((mid, top), (grandchild, mid)):
        assert child.status is RunStatus.COMPLETED
        assert child.parent_run_id == parent.run_id
        assert child.thread_id == top.thread_id
        (record,) = subgraph_records(world, parent.run_id)
        assert record.status is AttemptStatus.SUCCEEDED
        assert record.execution_metadata["child_run_id"] == child.run_id
        assert record.execution_metadata["deployment_ref"] == child.deployment_ref
        assert record.execution_metadata["child_status"] == "completed"
    assert grandchild.ancestor_run_ids == (mid.run_id, top.run_id)
    assert world.records(mid.run_id)[0].input_snapshot == {"x": 7}
    for run in (top, mid, grandchild):
        assert world.verified(run.run_id)
        assert {r.run_id for r in world.records(run.run_id)} == {run.run_id}


@pytest.mark.spec("§2.1 subgraph-node")
@pytest.mark.parametrize("ending", ["failed", "terminated_by_policy"])
def test_a_failing_or_policy_terminated_child_fails_the_parent_node(ending: str) -> None:
    world = World()
    if ending == "failed":
        world.deploy("leaf", leaf(action="boom"))
    else:
        world.deploy("leaf", leaf(capabilities=(Capability.NETWORK_WRITE,)))
        world.ecp.graphs.put_policy(
            TENANT, "leaf", DeploymentPolicyRequest(deny_capabilities=(Capability.NETWORK_WRITE,))
        )
    world.deploy("top", calling("top", "leaf"))
    top = world.run_to_rest("top")
    (child,) = world.children(top.run_id)
    assert child.public_status.value == ending
    assert top.status is RunStatus.FAILED
    assert top.failure_state is not None
    assert top.failure_state.reason == "child_failed"
    assert child.run_id in (top.failure_state.message or "")
    assert ending in (top.failure_state.message or "")
    (record,) = subgraph_records(world, top.run_id)
    assert record.status is AttemptStatus.FAILED
    assert record.error == {"type": "ChildFailed", "message": top.failure_state.message}
    assert [r.node_id for r in world.records(top.run_id)] == ["call"]
    assert world.verified(top.run_id)
    assert world.verified(child.run_id)


@pytest.mark.spec("§2.1 child-run-depth")
def test_a_deployment_that_starts_itself_ends_at_the_depth_limit() -> None:
    world = World()
    world.deploy("loop", calling("loop", "loop"))
    root = world.run_to_rest("loop")
    chain = [root]
    while kids := world.children(chain[-1].run_id):
        (only,) = kids
        chain.append(only)
    assert len(chain) == MAX_CHILD_DEPTH + 1
    deepest = chain[-1]
    assert deepest.failure_state is not None
    assert deepest.failure_state.reason == "child_depth_exceeded"
    (refused,) = world.records(deepest.run_id)
    assert refused.status is AttemptStatus.FAILED
    assert refused.error["type"] == "ChildDepthExceeded"
    for run in chain[:-1]:
        current = world.ecp.runs.get(TENANT, run.run_id)
        assert current.failure_state is not None
        assert current.failure_state.reason == "child_failed"
        assert len(subgraph_records(world, run.run_id)) == 1


@pytest.mark.spec("§2.1 child-run-depth")
def test_a_missing_child_deployment_fails_the_node_and_says_why() -> None:
    world = World()
    world.deploy("top", calling("top", "nowhere"))
    top = world.run_to_rest("top")
    assert top.failure_state is not None
    assert top.failure_state.reason == "child_deployment_missing"
    (record,) = world.records(top.run_id)
    assert record.error["type"] == "ChildDeploymentMissing"
    assert "nowhere" in record.error["message"]
    assert world.children(top.run_id) == []


@pytest.mark.spec("§2.1 subgraph-node")
def test_a_missing_copy_source_fails_with_mapping_error_before_any_child() -> None:
    world = World()
    world.deploy("leaf", leaf())
    absent = (CopyMappingOperation(source_path="nope", target_path="x"),)
    world.deploy("top", calling("top", "leaf", input=absent))
    top = world.run_to_rest("top")
    assert top.failure_state is not None
    assert top.failure_state.reason == "mapping_error"
    assert world.children(top.run_id) == []


@pytest.mark.spec("§2.1 subgraph-node")
def test_the_policy_guard_acts_on_the_node_before_the_child_starts() -> None:
    world = World()
    world.deploy("leaf", leaf())
    world.deploy("top", calling("top", "leaf", capabilities=(Capability.PROCESS_SPAWN,)))
    world.ecp.graphs.put_policy(
        TENANT, "top", DeploymentPolicyRequest(deny_capabilities=(Capability.PROCESS_SPAWN,))
    )
    top = world.run_to_rest("top")
    assert top.public_status.value == "terminated_by_policy"
    (record,) = world.records(top.run_id)
    assert record.status is AttemptStatus.REJECTED
    assert world.children(top.run_id) == []


@pytest.mark.spec("§2.1 subgraph-node")
def test_an_approval_grants_the_child_its_input_and_an_edit_replaces_it() -> None:
    world = World()
    world.deploy("leaf", leaf())
    build = (ConstantMappingOperation(target_path="amount", value="10.00"),)
    world.deploy("top", calling("top", "leaf", input=build, requires_approval=True))
    top = world.run_to_rest("top")
    assert top.status is RunStatus.WAITING_APPROVAL
    assert world.children(top.run_id) == []
    (approval,) = world.ecp.approvals.for_run(TENANT, top.run_id, None)
    assert approval.proposed_payload == {"amount": "10.00"}
    assert approval.summary == "Approve a child run of leaf"
    edited = {"amount": "12.50"}
    world.ecp.resolve(
        ACTOR,
        "top",
        approval.approval_id,
        ApprovalResolutionRequest(
            decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload=edited
        ),
    )
    world.settle()
    top = world.ecp.runs.get(TENANT, top.run_id)
    assert top.status is RunStatus.COMPLETED
    (child,) = world.children(top.run_id)
    assert child.output == {"amount": "12.50", "leaf": "done"}
    (record,) = subgraph_records(world, top.run_id)
    assert record.input_snapshot == edited
    assert record.execution_metadata["child_run_id"] == child.run_id


@pytest.mark.spec("§2.1 child-run-listing")
def test_children_page_oldest_first_and_another_tenant_s_run_is_not_found() -> None:
    world = World()
    world.deploy("leaf", leaf())
    fan_out = (
        GraphBuilder("fan")
        .subgraph("c1", "leaf")
        .subgraph("c2", "leaf")
        .subgraph("c3", "leaf")
        .end("done")
        .chain("c1", "c2", "c3", "done")
        .build()
    )
    world.deploy("fan", fan_out)
    fan = world.run_to_rest("fan", {"a": 1})
    assert fan.status is RunStatus.COMPLETED
    every = world.children(fan.run_id)
    assert len(every) == 3
    first, cursor = world.ecp.runs.children(TENANT, fan.run_id, limit=2)
    rest, last = world.ecp.runs.children(TENANT, fan.run_id, limit=2, cursor=cursor)
    assert [r.run_id for r in (*first, *rest)] == sorted(r.run_id for r in every)
    assert cursor is not None
    assert last is None
    assert len(subgraph_records(world, fan.run_id)) == 3
    with pytest.raises(NotFound):
        world.ecp.runs.children("other", fan.run_id)
    with pytest.raises(NotFound):
        world.ecp.runs.children(TENANT, "no-such-run")
    with pytest.raises(ValidationFailed):
        world.ecp.runs.children(TENANT, fan.run_id, limit=0)


# -- a property over whole trees ---------------------------------------------------------------------

ENDINGS = ("completed", "failed", "terminated_by_policy")


@pytest.mark.spec("§2.1 subgraph-node", "§2.1 child-run-depth")
@settings(max_examples=25, deadline=None)
@given(
    depth=st.integers(min_value=1, max_value=4),
    ending=st.sampled_from(ENDINGS),
    trailing=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_every_parent_records_each_child_once_and_ends_as_the_child_says(
    depth: int, ending: str, trailing: list[bool]
) -> None:
    """A chain of ``depth`` subgraph calls over a leaf that ends ``ending``.

    Every parent has exactly one record naming its one child, every chain verifies, and each
    parent ends completed when its child completed, else failed with ``child_failed``. A level
    may end at its subgraph node (no exits) or pass an end node after it (``trailing``).
    """
    world = World()
    if ending == "failed":
        world.deploy("level-0", leaf("level-0", action="boom"))
    else:
        world.deploy("level-0", leaf("level-0", capabilities=(Capability.NETWORK_WRITE,)))
        if ending == "terminated_by_policy":
            world.ecp.graphs.put_policy(
                TENANT,
                "level-0",
                DeploymentPolicyRequest(deny_capabilities=(Capability.NETWORK_WRITE,)),
            )
    for level in range(1, depth + 1):
        name = f"level-{level}"
        below = f"level-{level - 1}"
        builder = GraphBuilder(name).subgraph("call", below)
        if trailing[level - 1]:
            builder = builder.end("done").chain("call", "done")
        world.deploy(name, builder.build())
    root = world.run_to_rest(f"level-{depth}", {"n": depth})
    runs = [root]
    for _ in range(depth):
        (only,) = world.children(runs[-1].run_id)
        runs.append(only)
    assert world.children(runs[-1].run_id) == []
    assert runs[-1].public_status.value == ending
    for before, child in itertools.pairwise(runs):
        parent = world.ecp.runs.get(TENANT, before.run_id)
        named = subgraph_records(world, parent.run_id)
        assert [r.execution_metadata["child_run_id"] for r in named] == [child.run_id]
        if ending == "completed":
            assert parent.status is RunStatus.COMPLETED
            assert named[0].status is AttemptStatus.SUCCEEDED
        else:
            assert parent.status is RunStatus.FAILED
            assert parent.failure_state is not None
            assert parent.failure_state.reason == "child_failed"
            assert named[0].status is AttemptStatus.FAILED
    for run in runs:
        assert world.verified(run.run_id)


@pytest.mark.spec("C10 external-tasks")
def test_an_approved_task_node_is_offered_with_the_granted_arguments() -> None:
    """Gating grants task nodes as it grants action and subgraph nodes (ADR 0046)."""
    world = World()
    gated = (
        GraphBuilder("pay")
        .task("charge", "payments.charge", arguments={"amount": "1.00"}, requires_approval=True)
        .end("done")
        .chain("charge", "done")
        .build()
    )
    world.deploy("pay", gated)
    run = world.run_to_rest("pay")
    (approval,) = world.ecp.approvals.for_run(TENANT, run.run_id, None)
    world.ecp.resolve(
        ACTOR,
        "pay",
        approval.approval_id,
        ApprovalResolutionRequest(
            decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": "2.00"}
        ),
    )
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.WAITING_TASK
    (task,) = world.ecp.tasks.page(TENANT)[0]
    assert task.arguments == {"amount": "2.00"}
