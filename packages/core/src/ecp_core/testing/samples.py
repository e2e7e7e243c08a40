"""Sample domain values the conformance suites store and read back.

Each builder makes one valid value with a few knobs; equal arguments make equal values, so a
suite can compare what it reads with a freshly built copy of what it wrote.
"""

from datetime import UTC, datetime, timedelta

from ecp_core.deployments import Deployment
from ecp_core.graphs import GraphBuilder, GraphVersion, graph_digest
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.run.model import Run
from ecp_core.types import Capability, RunStatus

NOW = datetime(2026, 11, 22, 5, 0, 0, 123456, tzinfo=UTC)
"""The instant the samples are made at (microseconds on purpose)."""


def graph_version(
    tenant: str = "t1", graph_id: str = "g", version: int = 1, summary: str = "Approve"
) -> GraphVersion:
    """A stored version of a three-node graph: action ``a``, approval ``b``, end ``c``."""
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


def deployment(tenant: str = "t1", ref: str = "dep") -> Deployment:
    """A deployment of graph ``g`` version 1."""
    return Deployment(
        tenant_id=tenant,
        deployment_ref=ref,
        graph_id="g",
        graph_version=1,
        graph_version_ref="g@1",
        created_at=NOW,
    )


def policy(tenant: str = "t1", ref: str = "dep", version: int = 1) -> DeploymentPolicy:
    """A deployment policy that denies network writes."""
    return DeploymentPolicy(
        tenant_id=tenant,
        deployment_ref=ref,
        policy_id="p1",
        policy_version=version,
        deny_capabilities=(Capability.NETWORK_WRITE,),
        updated_at=NOW,
    )


def run(
    run_id: str = "run-1",
    tenant: str = "t1",
    status: RunStatus = RunStatus.PENDING,
    key: str | None = None,
    offset: int = 0,
) -> Run:
    """A run of deployment ``dep``, created and updated ``offset`` seconds after :data:`NOW`."""
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


def approval(
    approval_id: str = "ap-1",
    run_id: str = "run-1",
    tenant: str = "t1",
    deadline: datetime | None = None,
) -> ApprovalRecord:
    """A pending approval of node ``b``, due at ``deadline`` when given."""
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


def approval_action(
    approval_id: str = "ap-1", action: str = "requested", tenant: str = "t1"
) -> ApprovalActionRecord:
    """One entry of an approval's action trail."""
    return ApprovalActionRecord(
        approval_id=approval_id, action=action, occurred_at=NOW, tenant_id=tenant
    )
