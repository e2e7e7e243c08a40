"""Webhook subscriptions and dead letters over HTTP, and the sender's safety rules."""

import base64
import ipaddress

import pytest
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.config.settings import Settings
from ecp_http.outbound.webhook_sender import HttpxSender, target_problem, webhook_guard
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "w" * 40


def make_client(database, tmp_path, *, allow_private):
    settings = Settings(
        database_url=database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(17, 49))).decode(),
        webhook_allow_private_targets=allow_private,
    )
    return TestClient(create_app(settings, start_workers=False))


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def deploy(client):
    client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth())
    client.post(
        "/v1/deployments",
        json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
        headers=auth(),
    )


@pytest.mark.spec("§4.6 register-subscription", "C5 subscription-routes")
def test_subscriptions_round_trip(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path, allow_private=True) as client:
        deploy(client)
        body = {
            "deployment_ref": "refunds",
            "target_url": "http://127.0.0.1:9/hook",
            "event_types": ["run.completed"],
        }
        created = client.post("/webhooks/subscriptions", json=body, headers=auth())
        assert created.status_code == 201
        assert created.headers["cache-control"] == "no-store"
        secret = created.json()["secret"]
        assert len(secret) >= 32
        sub_id = created.json()["subscription"]["subscription_id"]
        listed = client.get("/webhooks/subscriptions", headers=auth()).json()["subscriptions"]
        assert [s["subscription_id"] for s in listed] == [sub_id]
        assert secret not in client.get("/webhooks/subscriptions", headers=auth()).text
        assert (
            client.get("/webhooks/subscriptions", headers=auth(tenant="globex")).json()[
                "subscriptions"
            ]
            == []
        )
        assert (
            client.delete(
                f"/webhooks/subscriptions/{sub_id}", headers=auth(tenant="globex")
            ).status_code
            == 404
        )
        assert client.delete(f"/webhooks/subscriptions/{sub_id}", headers=auth()).status_code == 204
        assert client.delete(f"/webhooks/subscriptions/{sub_id}", headers=auth()).status_code == 404
        assert (
            client.post("/webhooks/subscriptions", json=body, headers=auth("operator")).status_code
            == 403
        )
        unknown = client.post(
            "/webhooks/subscriptions", json={**body, "deployment_ref": "nope"}, headers=auth()
        )
        assert unknown.status_code == 404
        assert client.get("/webhooks/dead-letters", headers=auth()).json() == {
            "dead_letters": [],
            "next_cursor": None,
        }
        assert (
            client.post("/webhooks/dead-letters/missing/replay", headers=auth()).status_code == 404
        )


@pytest.mark.spec("C7 address-guard")
def test_private_targets_need_the_setting(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path, allow_private=False) as client:
        deploy(client)
        body = {
            "deployment_ref": "refunds",
            "target_url": "http://127.0.0.1:9/hook",
            "event_types": ["run.failed"],
        }
        refused = client.post("/webhooks/subscriptions", json=body, headers=auth())
        assert refused.status_code == 422
        assert refused.json()["errors"][0]["loc"] == ["target_url"]


@pytest.mark.spec("C7 address-guard")
@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.1.1", "fe80::1", "fd00:ec2::254"])
def test_link_local_and_metadata_are_always_refused(address):
    assert webhook_guard(allow_private=True).refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.spec("C7 address-guard")
@pytest.mark.parametrize(
    ("address", "private_ok"),
    [("127.0.0.1", True), ("10.1.2.3", True), ("192.168.0.1", True), ("8.8.8.8", False)],
)
def test_private_addresses_depend_on_the_setting(address, private_ok):
    assert webhook_guard(allow_private=True).refusal(ipaddress.ip_address(address)) is None
    assert (
        webhook_guard(allow_private=False).refusal(ipaddress.ip_address(address)) is not None
    ) is private_ok


@pytest.mark.spec("C7 address-guard")
@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "http:///nohost",
        "http://exa\x80mple.com/",
        "http://example.com:99999/",
    ],
)
def test_malformed_targets_are_problems_not_errors(url):
    assert target_problem(url, allow_private=True) is not None


@pytest.mark.spec("C7 address-guard")
def test_redirects_are_not_followed():
    with receiver(default=302) as hook:
        answer = HttpxSender(timeout_seconds=5, allow_private=True).post(hook.url, b"{}", {})
    assert answer.status_code == 302
    assert not answer.delivered
    assert len(hook.received) == 1


@pytest.mark.spec("C7 address-guard")
def test_special_targets_are_refused_even_with_private_targets_allowed(fresh_database, tmp_path):
    targets = [
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://100.100.100.200/",
        "http://100.64.0.1/",
        "http://[fec0::1]/",
    ]
    with make_client(fresh_database, tmp_path, allow_private=True) as client:
        deploy(client)
        for target in targets:
            body = {
                "deployment_ref": "refunds",
                "target_url": target,
                "event_types": ["run.failed"],
            }
            refused = client.post("/webhooks/subscriptions", json=body, headers=auth())
            assert refused.status_code == 422, target
            assert refused.json()["errors"][0]["loc"] == ["target_url"]
        assert client.get("/webhooks/subscriptions", headers=auth()).json()["subscriptions"] == []
