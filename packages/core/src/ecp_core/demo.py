"""``python -m ecp_core.demo``: the example graph run in memory, without a server, and printed."""

import json
from typing import Any

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphDefinition,
    ServiceRole,
    StartRunRequest,
    structure,
    unstructure,
)
from ecp_core.runs.run.model import RunStatusResponse

EXAMPLE_GRAPH: dict[str, Any] = {
    "graph_id": "refund-triage",
    "entry": "classify",
    "nodes": [
        {
            "id": "classify",
            "kind": "action",
            "action": {
                "name": "set",
                "fingerprint": "set/1",
                "arguments": {"values": {"category": "refund"}},
            },
        },
        {
            "id": "review",
            "kind": "approval",
            "summary": "Approve the refund",
            "rationale": "Refunds need a person",
        },
        {
            "id": "notify",
            "kind": "action",
            "action": {
                "name": "echo",
                "fingerprint": "echo/1",
                "arguments": {"to": "customer"},
                "capability_refs": ["network_write"],
            },
        },
        {"id": "done", "kind": "end"},
    ],
    "edges": [
        {"source": "classify", "target": "review"},
        {"source": "review", "target": "notify"},
        {
            "source": "notify",
            "target": "done",
            "condition": {"expression": "state.category == 'refund'"},
        },
    ],
}
"""The example graph (``refund-triage``, as in docs/quickstart.md), as a client would post it."""


def _show(title: str, value: object) -> None:
    print(f"\n== {title}")
    print(json.dumps(unstructure(value), indent=2))


def main() -> None:
    """Register, deploy, run, approve, then print the run, its timeline and the verification."""
    ecp = Ecp.in_memory()
    tenant = "demo"
    graph = ecp.graphs.register(tenant, structure(EXAMPLE_GRAPH, GraphDefinition))
    ecp.graphs.deploy(
        tenant, CreateDeploymentRequest(deployment_ref="refunds", graph_id=graph.graph_id)
    )
    run, _ = ecp.runs.start(
        tenant, StartRunRequest(deployment_ref="refunds", input={"order": "A-1001"})
    )
    run = ecp.runs.drive(tenant, run.run_id)
    waiting = list(run.pending_approval_ids)
    print(f"run {run.run_id} is {run.public_status.value}, waiting on {waiting}")
    reviewer = ActorIdentity(
        subject="reviewer@example.com",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.APPROVER,),
        tenant_id=tenant,
    )
    answer = ecp.resolve(
        reviewer,
        "refunds",
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, reason="Looks right"),
    )
    _show("run", RunStatusResponse.of(ecp.runs.get(tenant, run.run_id)))
    timeline = ecp.audit.timeline(tenant, run.run_id)
    print("\n== timeline")
    for entry in timeline.entries:
        digest = entry.record_digest[:23]
        print(f"  #{entry.attempt} {entry.node_id:<9} {entry.status.value:<17} {digest}…")
    _show("verification", ecp.audit.verify_run(tenant, run.run_id))
    print(f"\nrun status after approval: {answer.run.status.value}")


if __name__ == "__main__":
    main()
