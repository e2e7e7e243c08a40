"""A node attempt's state change, audit record and chain head commit together or not at all."""

import pytest
from tests.support.signers import FailingSigner

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest

GOOD = Ed25519Signer(bytes(range(3, 35)), key_id="good")


def prepare(uow):
    ecp = Ecp.build(uow, signer=GOOD)
    graph = (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"x": 1}})
        .end("b")
        .chain("a", "b")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return run


def test_a_failed_audit_write_leaves_the_run_untouched(uow):
    run = prepare(uow)
    broken = Ecp.build(uow, signer=FailingSigner(GOOD))
    with pytest.raises(RuntimeError, match="key store"):
        broken.runs.advance("t", run.run_id)
    assert broken.runs.get("t", run.run_id) == run
    with uow() as tx:
        assert tx.audit.head(run.run_id) is None
        assert tx.audit.for_run("t", run.run_id) == []
    healthy = Ecp.build(uow, signer=GOOD)
    done = healthy.runs.drive("t", run.run_id)
    assert done.status.value == "COMPLETED"
    assert done.attempts == 2
    assert healthy.audit.verify_run("t", run.run_id).verified


def test_no_event_is_queued_for_a_change_that_did_not_commit(uow):
    from datetime import UTC, datetime, timedelta

    from ecp_core import ActorIdentity, AuthMethod
    from ecp_core.webhooks import CreateSubscriptionRequest
    from ecp_core.webhooks.model import WebhookEventType

    run = prepare(uow)
    healthy = Ecp.build(uow, signer=GOOD)
    admin = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")
    healthy.webhooks.subscribe(
        admin,
        CreateSubscriptionRequest(
            deployment_ref="d",
            target_url="https://hooks.example.com/x",
            event_types=(WebhookEventType.RUN_STARTED, WebhookEventType.RUN_COMPLETED),
        ),
    )
    later = datetime.now(UTC) + timedelta(days=1)
    with pytest.raises(RuntimeError):
        Ecp.build(uow, signer=FailingSigner(GOOD)).runs.advance("t", run.run_id)
    with uow() as tx:
        assert tx.webhooks.claim_due(later, 10) == []
    healthy.runs.drive("t", run.run_id)
    with uow() as tx:
        queued = tx.webhooks.claim_due(later, 10)
    assert [d.event_type.value for d in queued] == ["run.started", "run.completed"]
    assert len({d.event_id for d in queued}) == 2
