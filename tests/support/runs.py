"""Small graphs and their deployments, shared by the dispatch and end-to-end tests."""

import time
from typing import Any

from ecp_core import ApprovalResolutionRequest, CreateDeploymentRequest, Ecp, GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.runs.run.model import Run
from ecp_core.types import ApprovalDecision, AuthMethod

REVIEWER = ActorIdentity(subject="reviewer", auth_method=AuthMethod.BEARER, tenant_id="t")
"""An approver of tenant ``t`` by bearer token."""


def three_steps() -> GraphDefinition:
    """``a`` (set) → ``b`` (echo) → ``c`` (end): two attempts and an end per run."""
    return (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"a": 1}})
        .action("b", "echo")
        .end("c")
        .chain("a", "b", "c")
        .build()
    )


def deploy_three_steps(ecp: Ecp, *tenants: str, ref: str = "d") -> None:
    """Register :func:`three_steps` and deploy it as ``ref`` for each tenant."""
    graph = three_steps()
    for tenant in tenants:
        ecp.graphs.register(tenant, graph)
        ecp.graphs.deploy(tenant, CreateDeploymentRequest(deployment_ref=ref, graph_id="g"))


def set_then_approve() -> GraphDefinition:
    """``set_value`` (set) → ``review`` (an approval) → ``done``: four audit records a run once
    approved."""
    return (
        GraphBuilder("pay")
        .action("set_value", "set", arguments={"values": {"amount_cents": 4200}})
        .approval("review", summary="Approve the amount", rationale="Payments need a person")
        .end("done")
        .chain("set_value", "review", "done")
        .build()
    )


def deploy_set_then_approve_once(ecp: Ecp, store: Any) -> None:
    """Register :func:`set_then_approve` and deploy it as ``d`` for tenant ``t``, unless
    ``store`` has that deployment already (a Hypothesis example after the first)."""
    with store.unit_of_work() as tx:
        if tx.deployments.get("t", "d") is not None:
            return
    ecp.graphs.register("t", set_then_approve())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="pay"))


PAY_GRAPH: dict[str, Any] = {
    "graph_id": "pay",
    "entry": "review",
    "nodes": [
        {"id": "review", "kind": "approval", "summary": "Pay", "rationale": "Money moves"},
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "review", "target": "done"}],
}
"""``review`` (an approval) → ``done``: three audit records a run once approved (over HTTP)."""


def approve_to_end(ecp: Ecp, run: Run, deployment_ref: str = "d") -> None:
    """Approve, as :data:`REVIEWER`, the approval ``run`` waits for; the run must then be
    completed."""
    answer = ecp.resolve(
        REVIEWER,
        deployment_ref,
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE),
    )
    assert answer.run.status.value == "completed", answer.run


def queued(group: CommitGroup, count: int) -> None:
    """Wait (at most 30 s) until ``count`` works wait behind the leader."""
    deadline = time.monotonic() + 30
    while group.waiting < count:
        assert time.monotonic() < deadline, "the works never queued"
        time.sleep(0.001)
