"""A cancel racing a worker's completion, and a run being dispatched, on PostgreSQL (ADR 0074).

Both writers lock in the same order, so neither waits for the other for ever: of a cancel and a
completion exactly one is applied (the chain records which), and a cancel of a run in the middle
of an attempt waits for the attempt to commit and cancels the run at the next node.
"""

import threading
from typing import Any

import pytest
from tests.support.together import together

from ecp_core import (
    ActionContext,
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import RunCanceled
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.runs.run.model import CancelRunRequest
from ecp_core.runs.tasks.model import TaskClaimRequest, TaskCompleteRequest
from ecp_core.types import AttemptStatus, RunStatus, ServiceRole

pytestmark = [pytest.mark.integration, pytest.mark.spec("C14 cancel-races")]

SIGNER = Ed25519Signer(bytes(range(40, 72)), key_id="races")
TENANT = "t"
ADMIN = ActorIdentity(
    subject="ops", auth_method=AuthMethod.BEARER, tenant_id=TENANT, roles=(ServiceRole.OPERATOR,)
)
WHY = CancelRunRequest(reason="race")
ROUNDS = 12


def deploy(ecp: Ecp, ref: str, graph_builder: GraphBuilder) -> None:
    graph = graph_builder.build()
    ecp.graphs.register(TENANT, graph)
    ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref=ref, graph_id=graph.graph_id))


def test_of_a_cancel_and_a_completion_exactly_one_is_applied(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    deploy(
        ecp,
        "d",
        GraphBuilder("g")
        .task("work", "pack")
        .approval("review", summary="Check", rationale="A person decides")
        .end("done")
        .chain("work", "review", "done"),
    )
    outcomes = set()
    for _ in range(ROUNDS):
        run, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d"))
        ecp.runs.drive(TENANT, run.run_id)
        (task,) = ecp.tasks.claim(TENANT, TaskClaimRequest(worker_id="w", topics=("pack",)))
        assert task.lock_token is not None
        done = TaskCompleteRequest(lock_token=task.lock_token, output={"packed": True})
        completed, canceled = together(
            lambda: ecp.tasks.complete(TENANT, task.task_id, done),  # noqa: B023
            lambda: ecp.runs.cancel(ADMIN, run.run_id, WHY),  # noqa: B023
        )
        assert not isinstance(canceled, Exception), canceled
        assert canceled.status is RunStatus.CANCELED
        records = ecp.audit.timeline(TENANT, run.run_id).entries
        statuses = [(r.node_id, r.status) for r in records]
        if isinstance(completed, RunCanceled):
            outcomes.add("cancel first")
            assert statuses[-1] == ("work", AttemptStatus.CANCELED)
            assert ("work", AttemptStatus.SUCCEEDED) not in statuses
        else:
            assert not isinstance(completed, Exception), completed
            outcomes.add("completion first")
            assert statuses[-3:] == [
                ("work", AttemptStatus.SUCCEEDED),  # the completion moved it on
                ("review", AttemptStatus.WAITING_APPROVAL),  # in the completion's commit
                ("review", AttemptStatus.CANCELED),  # where the cancel found it
            ]
        assert [s for _, s in statuses].count(AttemptStatus.CANCELED) == 1
        verified = ecp.audit.verify_run(TENANT, run.run_id)
        assert verified.verified
        assert verified.signature_verified is True
    assert outcomes  # which wins is the scheduler's choice; both are correct


def test_a_run_in_the_middle_of_an_attempt_is_canceled_at_the_next_node(postgres_store):
    entered, release = threading.Event(), threading.Event()

    def slow(_: ActionContext) -> dict[str, Any]:
        entered.set()
        assert release.wait(timeout=20)
        return {"slow": "done"}

    actions = ActionRegistry()
    actions.register("slow", slow)
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER, actions=actions)
    deploy(
        ecp,
        "d",
        GraphBuilder("g")
        .action("work", "slow")
        .approval("review", summary="Check", rationale="A person decides")
        .end("done")
        .chain("work", "review", "done"),
    )
    run, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d"))
    dispatcher = threading.Thread(target=lambda: ecp.runs.advance(TENANT, run.run_id))
    dispatcher.start()
    assert entered.wait(timeout=20)
    canceled: list[Any] = []
    canceller = threading.Thread(
        target=lambda: canceled.append(ecp.runs.cancel(ADMIN, run.run_id, WHY))
    )
    canceller.start()
    canceller.join(timeout=0.5)
    assert canceller.is_alive()  # it waits for the attempt's lock
    release.set()
    dispatcher.join(timeout=20)
    canceller.join(timeout=20)
    (after,) = canceled
    assert after.status is RunStatus.CANCELED
    statuses = [(r.node_id, r.status) for r in ecp.audit.timeline(TENANT, run.run_id).entries]
    assert ("work", AttemptStatus.SUCCEEDED) in statuses
    assert statuses[-1] == ("review", AttemptStatus.CANCELED)
    assert ecp.audit.verify_run(TENANT, run.run_id).verified
