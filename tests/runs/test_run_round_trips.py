"""One run on PostgreSQL costs few statements and commits, and still writes everything (ADR 0059).

The run of issue 22's profile (action ``set`` -> approval -> end, four signed records): at most
15 statements counting the implicit ``BEGIN`` and each ``COMMIT``, in 3 transactions. Counting
statements is exact, unlike timing, so it is a test; the figures are printed by
``bench/postgres_audit.py``.
"""

import psycopg
import pytest
from tests.support.runs import approve_to_end
from tests.support.statements import statements

from ecp_core import (
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.identity import ActorIdentity
from ecp_core.types import AuthMethod, RunStatus
from ecp_core.webhooks.model import CreateSubscriptionRequest, WebhookEventType

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(9, 41)), key_id="trips")


def deployed(store) -> Ecp:
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
    graph = (
        GraphBuilder("approve-then-end")
        .action("set_value", "set", arguments={"values": {"amount_cents": 4200}})
        .approval("review", summary="Approve the amount", rationale="Payments need a person")
        .end("done")
        .chain("set_value", "review", "done")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="approve-then-end"))
    return ecp


def one_run(ecp: Ecp, index: int, *, together: bool = False) -> str:
    """Start, drive to the approval (with ``together``: ``start_and_drive``), approve."""
    request = StartRunRequest(deployment_ref="d", input={"n": index})
    if together:
        run, _ = ecp.runs.start_and_drive("t", request)
    else:
        run, _ = ecp.runs.start("t", request)
        run = ecp.runs.drive("t", run.run_id)
    assert run.status is RunStatus.WAITING_APPROVAL
    approve_to_end(ecp, run)
    return run.run_id


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("subscribed", [False, True])
def test_a_run_costs_at_most_15_statements_in_3_transactions(postgres_store, subscribed, together):
    """With ``start_and_drive`` (ADR 0067) the start and the first attempts share a commit."""
    ecp = deployed(postgres_store)
    if subscribed:
        admin = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")
        ecp.webhooks.subscribe(
            admin,
            CreateSubscriptionRequest(
                deployment_ref="d",
                target_url="https://hooks.example.com/ecp",
                event_types=(WebhookEventType.RUN_COMPLETED,),
            ),
        )
    one_run(ecp, 0, together=together)  # warm: pool connections open, graph cached
    with statements() as seen:
        run_id = one_run(ecp, 1, together=together)
    commits = seen.count("COMMIT")
    assert commits == (2 if together else 3)
    # A deployment with subscriptions reads them with each lock of the run: two more statements.
    # Started and driven together, the deployment's read joins what the attempts read (ADR 0067).
    shown = [" ".join(sql.split())[:90] for sql in seen]
    most = (8 if together else 12) + (2 if subscribed else 0)
    assert len(seen) + commits <= most, "\n".join(shown)  # + the BEGINs
    result = ecp.audit.verify_run("t", run_id)
    assert (result.verified, result.signature_verified, result.record_count) == (True, True, 4)
    timeline = [entry.node_id for entry in ecp.audit.timeline("t", run_id).entries]
    assert timeline == ["set_value", "review", "review", "done"]
    with psycopg.connect(postgres_store.url) as conn:
        (queued,) = conn.execute(
            "SELECT count(*) FROM ecp_webhook_deliveries WHERE payload->'data'->>'run_id' = %s",
            (run_id,),
        ).fetchone()
    assert queued == (1 if subscribed else 0)  # the run.completed event, in the same commit
