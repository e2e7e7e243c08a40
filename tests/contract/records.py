"""Sample domain values for the contract suites."""

from datetime import UTC, datetime, timedelta

from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.deployments import Deployment
from ecp_core.graphs import GraphBuilder, GraphVersion, graph_digest
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.model import Run
from ecp_core.types import Capability, RunStatus

NOW = datetime(2026, 11, 22, 5, 0, 0, 123456, tzinfo=UTC)


def graph_version(tenant="t1", graph_id="g", version=1, summary="Approve"):
    definition = (
        GraphBuilder(graph_id)
        .action("a", "echo")
        .approval("b", summary=summary, rationale="r")
        .end("c")
        .chain("a", "b", "c")
        .build()
    )
    return GraphVersion(
        tenant_id=tenant,
        graph_id=graph_id,
        version=version,
        digest=graph_digest(definition),
        definition=definition,
        created_at=NOW,
    )


def deployment(tenant="t1", ref="dep"):
    return Deployment(
        tenant_id=tenant,
        deployment_ref=ref,
        graph_id="g",
        graph_version=1,
        graph_version_ref="g@1",
        created_at=NOW,
    )


def policy(tenant="t1", ref="dep", version=1):
    return DeploymentPolicy(
        tenant_id=tenant,
        deployment_ref=ref,
        policy_id="p1",
        policy_version=version,
        deny_capabilities=(Capability.NETWORK_WRITE,),
        updated_at=NOW,
    )


def run(run_id="run-1", tenant="t1", status=RunStatus.PENDING, key=None, offset=0):
    moment = NOW + timedelta(seconds=offset)
    return Run(
        run_id=run_id,
        tenant_id=tenant,
        deployment_ref="dep",
        graph_version_ref="g@1",
        thread_id=run_id,
        status=status,
        state={"x": [1, "é"], "n": None},
        next_node_id="a",
        idempotency_key=key,
        request_digest="sha256:" + "a" * 64,
        created_at=moment,
        updated_at=moment,
    )


def approval(approval_id="ap-1", run_id="run-1", tenant="t1", deadline=None):
    return ApprovalRecord(
        run_id=run_id,
        node_id="b",
        graph_version_ref="g@1",
        deployment_ref="dep",
        summary="s",
        rationale="r",
        approval_id=approval_id,
        proposed_payload={"k": "v"},
        sla_deadline=deadline,
        tenant_id=tenant,
        created_at=NOW,
        updated_at=NOW,
    )


def approval_action(approval_id="ap-1", action="requested", tenant="t1"):
    return ApprovalActionRecord(
        approval_id=approval_id, action=action, occurred_at=NOW, tenant_id=tenant
    )
