"""A small world for child-run tests: an in-memory service, deployments, and tree reads."""

from datetime import UTC, datetime
from typing import Any

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.run.actions import ActionContext, ActionRegistry
from ecp_core.runs.run.model import Run, StartRunRequest
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import AuthMethod, ServiceRole

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
SIGNER = Ed25519Signer(bytes(range(32)), key_id="child-runs")
TENANT = "t"
ACTOR = ActorIdentity(
    subject="reviewer", auth_method=AuthMethod.BEARER, tenant_id=TENANT, roles=(ServiceRole.ADMIN,)
)


def _boom(_: ActionContext) -> dict[str, Any]:
    msg = "the child's action broke"
    raise RuntimeError(msg)


class World:
    """A fresh in-memory service on a clock the test moves, with a failing ``boom`` action."""

    def __init__(self, uow: Any = None) -> None:
        """On a fresh memory store, or on the store ``uow`` opens units of work of."""
        actions = ActionRegistry()
        actions.register("boom", _boom)
        self.clock = FixedClock(EPOCH)
        options: dict[str, Any] = {"clock": self.clock, "ids": SequentialIds("c")}
        self.ecp = (
            Ecp.in_memory(signer=SIGNER, actions=actions, **options)
            if uow is None
            else Ecp.build(uow, signer=SIGNER, actions=actions, **options)
        )

    def deploy(self, ref: str, graph: GraphDefinition) -> None:
        self.ecp.graphs.register(TENANT, graph)
        self.ecp.graphs.deploy(
            TENANT, CreateDeploymentRequest(deployment_ref=ref, graph_id=graph.graph_id)
        )

    def run_to_rest(self, ref: str, payload: dict[str, Any] | None = None) -> Run:
        """Start a run and dispatch every runnable run (children included) until none is left."""
        run, _ = self.ecp.runs.start(
            TENANT, StartRunRequest(deployment_ref=ref, input=payload or {})
        )
        self.settle()
        return self.ecp.runs.get(TENANT, run.run_id)

    def settle(self) -> None:
        while self.ecp.runs.advance_next() is not None:
            pass

    def records(self, run_id: str) -> tuple[NodeAuditRecord, ...]:
        return self.ecp.audit.timeline(TENANT, run_id).entries

    def children(self, run_id: str) -> list[Run]:
        return self.ecp.runs.children(TENANT, run_id, limit=500)[0]

    def verified(self, run_id: str) -> bool:
        answer = self.ecp.audit.verify_run(TENANT, run_id)
        return answer.verified and answer.signature_verified is True


def calling(graph_id: str, ref: str, **options: Any) -> GraphDefinition:
    """``call`` (a subgraph node starting ``ref``) → ``done``."""
    return (
        GraphBuilder(graph_id).subgraph("call", ref, **options).end("done").chain("call", "done")
    ).build()


def leaf(graph_id: str = "leaf", action: str = "set", **options: Any) -> GraphDefinition:
    arguments = {"values": {"leaf": "done"}} if action == "set" else {}
    return (
        GraphBuilder(graph_id)
        .action("work", action, arguments=arguments, **options)
        .end("done")
        .chain("work", "done")
        .build()
    )


def subgraph_records(world: World, run_id: str) -> list[NodeAuditRecord]:
    """The parent records that name a child run."""
    return [
        r
        for r in world.records(run_id)
        if isinstance(r.execution_metadata, dict) and "child_run_id" in r.execution_metadata
    ]
