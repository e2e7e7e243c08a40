"""A run through an external task on PostgreSQL costs few statements (issue 40, item 4).

The graph of ``bench/tasks.py``'s contender B (``set`` -> a task -> end), driven in process as the
server drives it: the start, the dispatcher's attempts up to the task's offer, a worker's claim,
its completion. Each phase is counted in statements (the implicit ``BEGIN`` and each ``COMMIT``
included), which is exact, unlike timing: a claim is one statement with its lock (no lock-expiry
query first), and the completion runs the end node in its own transaction, so nothing is left
for a run worker to claim.
"""

import pytest
from tests.support.statements import statements

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.runs.tasks.model import NextClaim, TaskClaimRequest, TaskCompleteRequest
from ecp_core.types import RunStatus

pytestmark = pytest.mark.integration

RULE = "C20 task-round-trips"
SIGNER = Ed25519Signer(bytes(range(7, 39)), key_id="tasks")


def deployed(store) -> Ecp:
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
    graph = (
        GraphBuilder("worked")
        .action("start", "set", arguments={"values": {"ready": True}})
        .task("work", "bench.work")
        .end("done")
        .chain("start", "work", "done")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="worked"))
    return ecp


def one_run(ecp: Ecp, index: int) -> dict[str, list[str]]:
    """The statements of each phase of one run, which must complete with the task's output."""
    sent: dict[str, list[str]] = {}
    with statements() as sent["start"]:
        run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"n": index}))
    with statements() as sent["dispatch"]:
        ecp.runs.advance_next()
    assert ecp.runs.get("t", run.run_id).status is RunStatus.WAITING_TASK
    with statements() as sent["claim"]:
        (task,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w", topics=("bench.work",)))
    assert task.lock_token is not None
    done = TaskCompleteRequest(lock_token=task.lock_token, output={"worked": index})
    with statements() as sent["complete"]:
        ecp.tasks.complete("t", task.task_id, done)
    ended = ecp.runs.get("t", run.run_id)
    assert ended.status is RunStatus.COMPLETED, ended
    assert ended.output == {"n": index, "ready": True, "worked": index}
    return sent


@pytest.mark.spec(RULE)
def test_a_run_through_a_task_costs_few_statements_and_leaves_nothing_to_claim(postgres_store):
    ecp = deployed(postgres_store)
    one_run(ecp, 0)  # warm: the graph cached, statements prepared
    sent = one_run(ecp, 1)
    shown = {phase: [sql[:80] for sql in sqls] for phase, sqls in sent.items()}
    claim = sent["claim"]
    # BEGIN is implicit in psycopg, so a claim is its one statement and the commit
    assert len(claim) == 2, shown
    assert claim[-1] == "COMMIT", shown
    assert not any("locked_until <=" in sql and "SELECT" in sql[:20] for sql in claim), shown
    # the task, the run's lock, the writes (the task's change among them), the commit
    assert sent["complete"].count("COMMIT") == 1, shown
    assert len(sent["complete"]) <= 4, shown
    assert len(sent["dispatch"]) <= 5, shown
    assert sum(len(sqls) for sqls in sent.values()) <= 14, shown  # 23 before issue 40
    # nothing left to claim: the completion ran the end node
    with statements() as after:
        assert ecp.runs.advance_next() is None
    assert len(after) <= 3, after


@pytest.mark.spec("C20 complete-claims-next")
def test_a_completion_that_claims_the_next_task_is_one_transaction(postgres_store):
    ecp = deployed(postgres_store)
    one_run(ecp, 0)  # warm
    for index in (1, 2):
        ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"n": index}))
        ecp.runs.advance_next()
    (task,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w", topics=("bench.work",)))
    assert task.lock_token is not None
    terms = NextClaim(worker_id="w", topics=("bench.work",))
    done = TaskCompleteRequest(lock_token=task.lock_token, output={"worked": 1}, claim_next=terms)
    with statements() as sent:
        _, claimed = ecp.tasks.complete_and_claim("t", task.task_id, done)
    # the completion's at most 4 and the claim's one statement, under one commit
    assert sent.count("COMMIT") == 1, sent
    assert len(sent) <= 5, sent
    (following,) = claimed
    assert following.run_id != task.run_id
    assert ecp.tasks.get("t", following.task_id) == following
    assert ecp.runs.get("t", task.run_id).status is RunStatus.COMPLETED
