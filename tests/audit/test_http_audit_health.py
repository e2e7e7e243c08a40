"""Audit readiness and delivery health over HTTP; delivery to real receivers on 127.0.0.1."""

import base64
import time
from datetime import UTC, datetime

import pytest
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.outbound.webhook_sender import HttpxSender
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "h" * 40
SEED = base64.b64encode(bytes(range(21, 53))).decode("ascii")
COUNTERS = ("queued", "delivered", "retried", "rejected", "failed", "abandoned")
REFUSED = "http://127.0.0.1:9/hook"  # the discard port: nothing listens, the connection is refused


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def deploy(client, tenant="acme"):
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth(tenant=tenant)).is_success
    created = client.post(
        "/v1/deployments",
        json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
        headers=auth(tenant=tenant),
    )
    assert created.is_success, created.text


def health(client, role="viewer", tenant="acme", **params):
    answer = client.get("/v1/audit/delivery-health", params=params, headers=auth(role, tenant))
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.spec("§2.3 audit-delivery-health", "§6.1 retry-and-dead-letter")
def test_delivery_health_counts_accepted_rejected_failed_and_abandoned(fresh_database, tmp_path):
    """Four receivers: one accepts, one rejects (404), one fails (500), one refuses to connect."""
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=SEED,
        webhook_allow_private_targets=True,
        webhook_max_attempts=2,
        webhook_backoff_base_seconds=0.01,
        webhook_backoff_max_seconds=0.02,
    )
    sender = HttpxSender(timeout_seconds=5, allow_private=True)
    with (
        receiver() as accepts,
        receiver(default=404) as rejects,
        receiver(default=500) as fails,
        TestClient(create_app(settings, start_workers=False)) as client,
    ):
        ecp = client.app.state.runtime.ecp
        deploy(client)
        for url in (accepts.url, rejects.url, fails.url, REFUSED):
            subscribed = client.post(
                "/webhooks/subscriptions",
                json={
                    "deployment_ref": "refunds",
                    "target_url": url,
                    "event_types": ["run.started"],
                },
                headers=auth(),
            )
            assert subscribed.status_code == 201, subscribed.text
        started = client.post(
            "/runs", json={"deployment_ref": "refunds", "input": {}}, headers=auth()
        )
        assert started.status_code == 201, started.text
        ecp.runs.drive("acme", started.json()["run_id"])  # no workers here: drive it ourselves
        queued = health(client)
        assert queued == {
            "queue_depth": 4,
            "queued": 4,
            "delivered": 0,
            "retried": 0,
            "rejected": 0,
            "failed": 0,
            "abandoned": 0,
            "losing_events": False,
        }
        deadline = time.monotonic() + 30
        while health(client)["queue_depth"]:
            assert time.monotonic() < deadline, "deliveries did not settle"
            ecp.webhooks.deliver_due(sender)
            time.sleep(0.02)
        settled = health(client)
        assert settled == {
            "queue_depth": 0,
            "queued": 4,
            "delivered": 1,
            "retried": 3,
            "rejected": 2,
            "failed": 4,
            "abandoned": 3,
            "losing_events": True,
        }
        assert (len(accepts.received), len(rejects.received), len(fails.received)) == (1, 2, 2)
        assert len(ecp.webhooks.dead_letters("acme")) == 3
        # Another tenant sees nothing of acme's outbox; a window after it all counts nothing.
        assert health(client, tenant="globex")["queued"] == 0
        time.sleep(0.01)
        after_all = health(client, since=datetime.now(UTC).isoformat())
        assert after_all == {**settled, **dict.fromkeys(COUNTERS, 0), "losing_events": False}


@pytest.fixture
def memory_client(tmp_path):
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, data_dir=tmp_path)
    with TestClient(create_app(settings, start_workers=False, storage=MemoryStore())) as client:
        yield client


@pytest.mark.spec("§2.3 audit-delivery-health")
@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("since=2999-01-01T00:00:00Z", "validation_failed"),
        ("since=2026-01-01T00:00:00", "validation_failed"),
        ("since=yesterday", "validation_failed"),
        ("since=", "validation_failed"),
        ("window=24h", "unknown_parameter"),
    ],
)
def test_a_bad_window_is_422(memory_client, query, code):
    """A future, naive or unreadable since, or an unknown parameter, is a clear 422."""
    answer = memory_client.get(f"/v1/audit/delivery-health?{query}", headers=auth())
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == code


@pytest.mark.spec("§2.3 audit-readiness")
def test_readiness_reports_signing_mode_and_consequential_actions(memory_client):
    """The server signs: ready; deploying the example graph (actions of unknown effect) counts."""
    before = memory_client.get("/v1/audit/readiness", headers=auth("viewer"))
    assert before.status_code == 200
    assert before.json() == {
        "ready": True,
        "state": "ready",
        "deployment_mode": "self_hosted",
        "signing_required": True,
        "signer_available": True,
        "consequential_actions": False,
        "message": "Audit records and attestations are signed.",
    }
    deploy(memory_client)
    after = memory_client.get("/v1/audit/readiness", headers=auth("viewer")).json()
    assert after["consequential_actions"] is True
    other = memory_client.get("/v1/audit/readiness", headers=auth("viewer", tenant="globex"))
    assert other.json()["consequential_actions"] is False


@pytest.mark.spec("§2.3 audit-readiness")
def test_the_signing_requirement_and_hosted_mode_come_from_settings(tmp_path):
    """ECP_AUDIT_SIGNING_REQUIRED=false is reported; ECP_HOSTED reports the hosted mode."""
    env = {
        "ECP_JWT_SECRET": SECRET,
        "ECP_AUDIT_SIGNING_KEY": SEED,
        "ECP_AUDIT_SIGNING_REQUIRED": "false",
        "ECP_HOSTED": "true",
        "ECP_DATA_DIR": str(tmp_path),
    }
    settings = Settings.from_mapping(env)
    assert settings.audit_signing_required is False
    assert Settings.from_mapping({}).audit_signing_required is True
    with TestClient(create_app(settings, start_workers=False, storage=MemoryStore())) as client:
        found = client.get("/v1/audit/readiness", headers=auth("viewer")).json()
    assert (found["signing_required"], found["deployment_mode"], found["ready"]) == (
        False,
        "hosted",
        True,
    )


def test_audit_health_permissions(memory_client):
    """Both reads need audit_read: workers are 403, callers without credentials 401."""
    for path in ("/v1/audit/readiness", "/v1/audit/delivery-health"):
        assert memory_client.get(path).status_code == 401
        assert memory_client.get(path, headers=auth("worker")).status_code == 403
        for role in ("viewer", "operator", "admin"):
            assert memory_client.get(path, headers=auth(role)).status_code == 200
