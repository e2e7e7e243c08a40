"""Webhook secrets and the test event over HTTP, against a running server with its workers.

The receiver on 127.0.0.1 verifies every delivery with the ``standardwebhooks`` library.
"""

import base64
import json
import time
from importlib.metadata import version

import pytest
from standardwebhooks import Webhook
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

JWT = "w" * 40
PROBLEM_JSON = "application/problem+json"


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(JWT, tenant=tenant, roles=[role])}"}


@pytest.fixture
def client(fresh_database, tmp_path):
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=JWT,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(17, 49))).decode(),
        webhook_allow_private_targets=True,
    )
    with TestClient(create_app(settings)) as client:
        client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth())
        client.post(
            "/v1/deployments",
            json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
            headers=auth(),
        )
        yield client


def subscribe(client, url, **extra):
    body = {"deployment_ref": "refunds", "target_url": url, "event_types": ["run.failed"]}
    return client.post("/webhooks/subscriptions", json={**body, **extra}, headers=auth())


@pytest.mark.spec("C11 whsec-secrets")
@pytest.mark.parametrize(
    "secret",
    [
        "whsec_not base64 at all!",
        "whsec_" + base64.b64encode(bytes(16)).decode(),
        "whsec_" + "A" * 45,
    ],
)
def test_a_bad_whsec_secret_is_a_422_problem(client, secret):
    refused = subscribe(client, "http://127.0.0.1:9/hook", secret=secret)
    assert refused.status_code == 422
    assert refused.headers["content-type"].startswith(PROBLEM_JSON)
    assert refused.json()["errors"][0]["loc"] == ["secret"]
    assert client.get("/webhooks/subscriptions", headers=auth()).json()["subscriptions"] == []


@pytest.mark.spec("C11 whsec-secrets")
def test_given_and_made_secrets_are_answered_once(client):
    given = "whsec_" + base64.b64encode(bytes(range(40))).decode().rstrip("=")
    created = subscribe(client, "http://127.0.0.1:9/hook", secret=given)
    assert created.status_code == 201
    assert created.json()["secret"] == given
    made = subscribe(client, "http://127.0.0.1:9/hook").json()["secret"]
    assert made.startswith("whsec_")
    assert len(base64.b64decode(made.removeprefix("whsec_"))) == 32
    listed = client.get("/webhooks/subscriptions", headers=auth()).text
    assert given not in listed
    assert made not in listed


@pytest.mark.spec("C11 secret-rotation", "C11 test-event", "C11 user-agent")
def test_rotate_then_test_event_arrives_at_once_signed_by_both_secrets(client):
    with receiver() as hook:
        created = subscribe(client, hook.url).json()
        old = created["secret"]
        subscription_id = created["subscription"]["subscription_id"]
        path = f"/webhooks/subscriptions/{subscription_id}"
        assert (
            client.post(f"{path}/rotate-secret", headers=auth(tenant="globex")).status_code == 404
        )
        assert client.post(f"{path}/rotate-secret", headers=auth("operator")).status_code == 403
        rotated = client.post(f"{path}/rotate-secret", headers=auth())
        assert rotated.status_code == 200
        assert rotated.headers["cache-control"] == "no-store"
        new = rotated.json()["secret"]
        assert new.startswith("whsec_")
        assert new != old
        assert rotated.json()["subscription"]["subscription_id"] == subscription_id
        assert set(rotated.json()) == {"subscription", "secret", "previous_secret_expires_at"}
        assert new not in client.get("/webhooks/subscriptions", headers=auth()).text

        assert client.post("/webhooks/subscriptions/nope/test", headers=auth()).status_code == 404
        queued = client.post(f"{path}/test", headers=auth())
        assert queued.status_code == 202
        assert queued.json()["event_type"] == "webhook.test"
        assert queued.json()["status"] == "pending"
        # Due at once: the delivery sweep (every 0.1 s by default) sends it, no backoff.
        assert hook.arrived.wait(20)
    (got,) = hook.received
    event = json.loads(got.body)
    assert event["event_type"] == "webhook.test" == got.headers["x-service-event-type"]
    assert event["event_id"] == queued.json()["event_id"] == got.headers["webhook-id"]
    assert event["data"] == {"subscription_id": subscription_id}
    assert event["deployment_ref"] == "refunds"
    assert got.headers["user-agent"] == f"ecp-webhooks/{version('ecp-http')}"
    assert got.headers["webhook-signature"].count("v1,") == 2
    assert Webhook(old).verify(got.body, got.headers) == event
    assert Webhook(new).verify(got.body, got.headers) == event


@pytest.mark.spec("C11 test-event")
def test_the_test_event_is_not_counted_in_delivery_health(client):
    with receiver(default=500) as hook:
        created = subscribe(client, hook.url).json()
        subscription_id = created["subscription"]["subscription_id"]
        assert (
            client.post(
                f"/webhooks/subscriptions/{subscription_id}/test", headers=auth()
            ).status_code
            == 202
        )
        deadline = time.monotonic() + 30
        while len(hook.received) < 2:  # the retry: the first failed attempt is committed
            assert time.monotonic() < deadline, "no retry"
            time.sleep(0.05)
        health = client.get("/v1/audit/delivery-health", headers=auth()).json()
    assert (health["queued"], health["failed"], health["queue_depth"]) == (0, 0, 0)
    assert health["losing_events"] is False
