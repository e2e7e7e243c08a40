"""Standard Webhooks on real deliveries: a receiver on 127.0.0.1 verifies with ``standardwebhooks``.

The server signs with its (injected) clock; the verifier's clock is the library's own
``datetime.now``, which :func:`verifier_clock` points at a clock the test moves. Deliveries go
through PostgreSQL and the httpx sender, as in the server.
"""

import base64
import hashlib
import hmac
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from importlib.metadata import version

import httpx
import psycopg
import pytest
import standardwebhooks.webhooks
from standardwebhooks import Webhook, WebhookVerificationError
from tests.support.receiver import Received, receiver
from tests.support.webhook_guide import guide_verifiers

from ecp_core import ActorIdentity, AuthMethod, CreateDeploymentRequest, Ecp, GraphBuilder
from ecp_core.system import FixedClock
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule, signature_matches
from ecp_core.webhooks.model import WebhookEventType
from ecp_http.outbound.webhook_sender import HttpxSender

pytestmark = pytest.mark.integration

ADMIN = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")
FAST = RetrySchedule(max_attempts=2, base_seconds=0.01, max_seconds=0.05)
COMPLETED = WebhookEventType.RUN_COMPLETED
STANDARD = ("webhook-id", "webhook-timestamp", "webhook-signature")


@pytest.fixture
def verifier_clock(monkeypatch):
    """Point the library's clock at a FixedClock the test moves (its tolerance is 5 minutes)."""

    def follow(clock: FixedClock) -> None:
        class Moved(datetime):
            @classmethod
            def now(cls, tz=None):
                return clock.now().astimezone(tz)

        monkeypatch.setattr(standardwebhooks.webhooks, "datetime", Moved)

    return follow


def library_judge(*secrets):
    """A receiver that answers 204 when the library verifies the delivery with any of ``secrets``."""

    def judge(got: Received) -> int:
        for secret in secrets:
            try:
                Webhook(secret).verify(got.body, got.headers)
            except WebhookVerificationError:
                continue
            return 204
        return 400

    return judge


def build(store, clock):
    ecp = Ecp.build(store.unit_of_work, signer=None, clock=clock, webhook_retry=FAST)
    graph = GraphBuilder("g").action("a", "set", arguments={"values": {}}).end("b")
    ecp.graphs.register("t", graph.chain("a", "b").build())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp


def subscribe(ecp, url, secret=None):
    request = CreateSubscriptionRequest(
        deployment_ref="d", target_url=url, event_types=(COMPLETED,), secret=secret
    )
    return ecp.webhooks.subscribe(ADMIN, request)


def deliver_one(ecp, hook, sender):
    """Emit run.completed and deliver it; the request the receiver got."""
    ecp.webhooks.emit(COMPLETED, "d", "t", {"n": len(hook.received)})
    before = len(hook.received)
    deadline = time.monotonic() + 20
    while len(hook.received) == before:
        assert time.monotonic() < deadline, "timed out delivering"
        ecp.webhooks.deliver_due(sender)
    return hook.received[-1]


def resend(url, got):
    """Send a captured delivery again, byte for byte, with its old headers."""
    headers = {name: got.headers[name] for name in (*STANDARD, "content-type")}
    return httpx.post(url, content=got.body, headers=headers, timeout=10).status_code


def only(got, signature):
    return {**got.headers, "webhook-signature": signature}


@pytest.mark.spec("C11 standard-webhooks", "C11 user-agent", "C11 whsec-secrets")
def test_the_library_verifies_real_deliveries_and_refuses_a_late_replay(
    postgres_store, verifier_clock
):
    server_clock = FixedClock(datetime.now(UTC))
    reader_clock = FixedClock(server_clock.now())
    verifier_clock(reader_clock)
    ecp = build(postgres_store, server_clock)
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver() as hook:
        secret = subscribe(ecp, hook.url).secret
        assert secret.startswith("whsec_")
        hook.judge = library_judge(secret)
        got = deliver_one(ecp, hook, sender)
        assert got.answered == 204
        event = json.loads(got.body)
        assert got.headers["webhook-id"] == event["event_id"] == got.headers["x-service-event-id"]
        assert got.headers["webhook-timestamp"] == str(int(server_clock.now().timestamp()))
        assert got.headers["user-agent"] == f"ecp-webhooks/{version('ecp-http')}"
        key = base64.b64decode(secret.removeprefix("whsec_"))
        assert got.headers["x-service-signature"] == hmac.new(key, got.body, "sha256").hexdigest()
        assert signature_matches(secret, got.body, got.headers["x-service-signature"])
        guide = guide_verifiers()
        assert guide["verify_with_library"](secret, got.body, got.headers) == event
        assert guide["verify_standard"](
            secret, got.body, got.headers, now=reader_clock.now().timestamp()
        )
        assert guide["verified"](secret, got.body, got.headers["x-service-signature"])
        # Sent again within the tolerance, the capture still verifies; 5 minutes on, it does not.
        assert resend(hook.url, got) == 204
        reader_clock.advance(5 * 60 + 1)
        assert resend(hook.url, got) == 400
        with pytest.raises(WebhookVerificationError, match="too old"):
            Webhook(secret).verify(got.body, got.headers)
        late = reader_clock.now().timestamp()
        assert not guide["verify_standard"](secret, got.body, got.headers, now=late)
    assert ecp.webhooks.dead_letters("t") == []


@pytest.mark.spec("C11 standard-webhooks", "C11 whsec-secrets")
def test_a_plain_secret_signs_with_its_text(postgres_store, verifier_clock):
    clock = FixedClock(datetime.now(UTC))
    verifier_clock(clock)
    ecp = build(postgres_store, clock)
    plain = "a-plain-secret-0123456789"
    with receiver() as hook:
        subscribe(ecp, hook.url, secret=plain)
        hook.judge = library_judge(plain.encode())
        got = deliver_one(ecp, hook, HttpxSender(timeout_seconds=5, allow_private=True))
    assert got.answered == 204
    expected = hmac.new(plain.encode(), got.body, hashlib.sha256).hexdigest()
    assert got.headers["x-service-signature"] == expected
    assert guide_verifiers()["verify_with_library"](plain, got.body, got.headers)


@pytest.mark.spec("C11 secret-rotation", "C11 standard-webhooks")
def test_during_the_overlap_both_secrets_sign_and_after_24_hours_only_the_new_one(
    postgres_store, verifier_clock
):
    clock = FixedClock(datetime.now(UTC))
    verifier_clock(clock)
    ecp = build(postgres_store, clock)
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with receiver() as hook:
        created = subscribe(ecp, hook.url)
        old = created.secret
        subscription_id = created.subscription.subscription_id
        hook.judge = library_judge(old)  # a receiver not yet told of the rotation
        rotated = ecp.webhooks.rotate_secret("t", subscription_id)
        new = rotated.secret
        assert new != old
        assert new.startswith("whsec_")
        assert rotated.previous_secret_expires_at == clock.now() + timedelta(hours=24)
        during = deliver_one(ecp, hook, sender)
        assert during.answered == 204
        for_new, for_old = during.headers["webhook-signature"].split(" ")
        Webhook(new).verify(during.body, during.headers)
        Webhook(old).verify(during.body, only(during, for_old))
        Webhook(new).verify(during.body, only(during, for_new))
        with pytest.raises(WebhookVerificationError):
            Webhook(old).verify(during.body, only(during, for_new))
        with pytest.raises(WebhookVerificationError):
            Webhook(new).verify(during.body, only(during, for_old))
        assert signature_matches(new, during.body, during.headers["x-service-signature"])
        clock.advance(24 * 3600 - 1)
        assert len(deliver_one(ecp, hook, sender).headers["webhook-signature"].split()) == 2
        clock.advance(1)
        after = deliver_one(ecp, hook, sender)
        assert after.answered == 400  # the receiver that kept the old secret refuses now
        assert after.headers["webhook-signature"].count("v1,") == 1
        Webhook(new).verify(after.body, after.headers)
        with pytest.raises(WebhookVerificationError):
            Webhook(old).verify(after.body, after.headers)
    assert ecp.webhooks.drop_expired_secrets() == 1
    with postgres_store.unit_of_work() as uow:
        stored = uow.webhooks.subscription("t", subscription_id)
    assert (stored.secret, stored.previous_secret) == (new, None)


@pytest.mark.spec("C11 secret-rotation")
def test_a_second_rotation_in_the_overlap_drops_the_oldest_secret(postgres_store, verifier_clock):
    clock = FixedClock(datetime.now(UTC))
    verifier_clock(clock)
    ecp = build(postgres_store, clock)
    with receiver() as hook:
        created = subscribe(ecp, hook.url)
        first = created.secret
        second = ecp.webhooks.rotate_secret("t", created.subscription.subscription_id).secret
        clock.advance(3600)
        third = ecp.webhooks.rotate_secret("t", created.subscription.subscription_id)
        assert third.previous_secret_expires_at == clock.now() + timedelta(hours=24)
        hook.judge = library_judge(first)
        got = deliver_one(ecp, hook, HttpxSender(timeout_seconds=5, allow_private=True))
    assert got.answered == 400
    assert got.headers["webhook-signature"].count("v1,") == 2
    Webhook(third.secret).verify(got.body, got.headers)
    Webhook(second).verify(got.body, got.headers)


@pytest.mark.spec("C11 secret-rotation")
def test_concurrent_rotations_lose_no_secret_they_handed_out(postgres_store):
    """The second rotation waits for the first's row lock, then moves the secret it wrote."""
    clock = FixedClock(datetime.now(UTC))
    ecp = build(postgres_store, clock)
    subscription_id = subscribe(ecp, "http://127.0.0.1:9/hook").subscription.subscription_id
    expires = clock.now() + timedelta(hours=24)
    results = {}
    with postgres_store.unit_of_work() as first:
        results["first"] = first.webhooks.rotate_secret("t", subscription_id, "s-one" * 4, expires)

        def second() -> None:
            with postgres_store.unit_of_work() as uow:
                results["second"] = uow.webhooks.rotate_secret(
                    "t", subscription_id, "s-two" * 4, expires
                )
                uow.commit()

        thread = threading.Thread(target=second)
        thread.start()
        deadline = time.monotonic() + 20
        while not waiting_on_a_lock(postgres_store):
            assert time.monotonic() < deadline, "the second rotation never waited"
            time.sleep(0.01)
        first.commit()
    thread.join(20)
    assert results["second"].previous_secret == "s-one" * 4
    with postgres_store.unit_of_work() as uow:
        stored = uow.webhooks.subscription("t", subscription_id)
    assert (stored.secret, stored.previous_secret) == ("s-two" * 4, "s-one" * 4)


def waiting_on_a_lock(store) -> bool:
    with psycopg.connect(store.url) as conn:
        (waiting,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE ecp_webhook_subscriptions%'"
        ).fetchone()
    return waiting > 0
