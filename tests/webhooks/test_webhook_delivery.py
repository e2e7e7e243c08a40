"""Webhook delivery to a real receiver on 127.0.0.1, through the httpx sender and PostgreSQL."""

import json
import subprocess
import sys
import threading
import time

import pytest
from tests.support.receiver import receiver

from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.runs.run.model import CancelRunRequest
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule, signature_matches
from ecp_core.webhooks.model import WebhookEventType
from ecp_http.outbound.webhook_sender import HttpxSender

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(13, 45)), key_id="hooks")
ADMIN = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")
FAST = RetrySchedule(max_attempts=5, base_seconds=0.01, max_seconds=0.05)
SECRET = "receiver-secret-0123456789"


def setup(store, url, events=("run.completed",), policy=FAST):
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER, webhook_retry=policy)
    graph = (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"x": 1}})
        .end("b")
        .chain("a", "b")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    ecp.webhooks.subscribe(
        ADMIN,
        CreateSubscriptionRequest(
            deployment_ref="d",
            target_url=url,
            event_types=tuple(WebhookEventType(e) for e in events),
            secret=SECRET,
        ),
    )
    return ecp


def complete_a_run(ecp):
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return ecp.runs.drive("t", run.run_id)


def deliver_until(ecp, sender, done, seconds=20):
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out delivering"
        ecp.webhooks.deliver_due(sender)
        time.sleep(0.01)


@pytest.mark.spec("§6.1 lifecycle-events", "§5 outbound-signature", "C5 event-payload")
def test_a_completed_run_delivers_exactly_one_signed_event(postgres_store):
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver() as hook:
        ecp = setup(postgres_store, hook.url, events=("run.completed", "run.failed"))
        run = complete_a_run(ecp)
        deliver_until(ecp, sender, lambda: hook.received)
        for _ in range(3):
            ecp.webhooks.deliver_due(sender)
    (got,) = hook.received
    assert signature_matches(SECRET, got.body, got.headers["x-service-signature"])
    payload = json.loads(got.body)
    assert payload["event_type"] == "run.completed" == got.headers["x-service-event-type"]
    assert payload["event_id"] == got.headers["x-service-event-id"]
    assert payload["data"]["run_id"] == run.run_id
    assert set(payload) == {
        "event_id",
        "event_type",
        "tenant_id",
        "deployment_ref",
        "occurred_at",
        "data",
    }


@pytest.mark.spec("§6.1 at-least-once", "§6.1 retry-and-dead-letter", "§2.7 stable-event-id")
def test_four_failures_then_success_resend_the_same_event(postgres_store):
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver(script=[500, 500, 500, 500]) as hook:
        ecp = setup(postgres_store, hook.url)
        complete_a_run(ecp)
        deliver_until(ecp, sender, lambda: len(hook.received) == 5)
        time.sleep(0.1)
        ecp.webhooks.deliver_due(sender)
    assert len(hook.received) == 5
    assert len({r.headers["x-service-event-id"] for r in hook.received}) == 1
    assert ecp.webhooks.dead_letters("t") == []


@pytest.mark.spec("§6.1 retry-and-dead-letter")
def test_a_receiver_that_always_fails_ends_in_a_dead_letter_that_replays(postgres_store):
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver(default=503) as hook:
        ecp = setup(postgres_store, hook.url)
        complete_a_run(ecp)
        deliver_until(ecp, sender, lambda: ecp.webhooks.dead_letters("t"))
        (dead,) = ecp.webhooks.dead_letters("t")
        delivery, attempts = ecp.webhooks.dead_letter("t", dead.delivery_id)
        assert [a.status_code for a in attempts] == [503] * 5
        hook.default = 200
        replay = ecp.webhooks.replay("t", dead.delivery_id)
        assert ecp.webhooks.replay("t", dead.delivery_id) == replay
        deliver_until(ecp, sender, lambda: len(hook.received) == 6)
    assert {r.headers["x-service-event-id"] for r in hook.received} == {delivery.event_id}


WORKER = """
import sys
from ecp_core import Ecp, Ed25519Signer
from ecp_core.webhooks import RetrySchedule
from ecp_http.outbound.webhook_sender import HttpxSender
from ecp_postgres import PostgresStore
with PostgresStore(sys.argv[1], max_size=2) as store:
    ecp = Ecp.build(store.unit_of_work, signer=Ed25519Signer(bytes(range(13, 45)), key_id="hooks"))
    ecp.webhooks.deliver_due(HttpxSender(timeout_seconds=60, allow_private=True))
"""


@pytest.mark.spec("§6.1 at-least-once")
def test_a_killed_worker_loses_nothing(postgres_store):
    hold = threading.Event()
    with receiver(hold=hold) as hook:
        ecp = setup(postgres_store, hook.url)
        complete_a_run(ecp)
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, postgres_store.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert hook.arrived.wait(30), worker.communicate()
        worker.kill()
        worker.communicate(timeout=30)
        hook.hold = None
        hold.set()
        deliver_until(
            ecp, HttpxSender(timeout_seconds=5, allow_private=True), lambda: len(hook.received) == 2
        )
        (delivery,) = [d for d in [ecp.webhooks.dead_letters("t")] if d] or [None]
    assert delivery is None
    assert len({r.headers["x-service-event-id"] for r in hook.received}) == 1


@pytest.mark.spec("C14 cancel")
def test_a_canceled_run_delivers_run_canceled_with_its_status(postgres_store):
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver() as hook:
        ecp = setup(postgres_store, hook.url, events=("run.canceled", "run.completed"))
        run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
        ecp.runs.cancel(ADMIN, run.run_id, CancelRunRequest(reason="not wanted"))
        deliver_until(ecp, sender, lambda: hook.received)
        for _ in range(3):
            ecp.webhooks.deliver_due(sender)
    (got,) = hook.received
    payload = json.loads(got.body)
    assert payload["event_type"] == "run.canceled"
    assert payload["data"]["run_id"] == run.run_id
    assert payload["data"]["status"] == "canceled"
    assert ecp.runs.advance_next() is None
