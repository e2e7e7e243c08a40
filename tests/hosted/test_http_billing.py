"""Hosted billing over HTTP: a real server (uvicorn on 127.0.0.1) and the loopback stand-in merchant.

The stand-in answers the server's checkout and portal calls and POSTs signed subscription events
to the server's webhook, as Paddle does; every test runs on the memory store and on PostgreSQL.
"""

import base64
import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import attrs
import httpx
import pytest
import uvicorn
from starlette.testclient import TestClient

from ecp_billing import StandinMerchant, deliver, subscription_payload
from ecp_billing.standin import MONTH
from ecp_core.memory import MemoryStore
from ecp_http.config.hosted import BillingSettings, HostedSettings
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.server.handlers.billing import WEBHOOK_PATH
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

JWT_SECRET = "b" * 40
SECRET = "pdl_ntfset_http_" + "w" * 24
SOLO = "pri_solo_http"
CHECKOUT = "/v1/cloud/billing/checkout"
PORTAL = "/v1/cloud/billing/portal"


def settings(merchant_url: str, **changes) -> Settings:
    billing = BillingSettings(
        enabled=True,
        api_key="key",
        webhook_secret=SECRET,
        solo_price_id=SOLO,
        base_url=merchant_url,
    )
    return Settings(
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(bytes(range(40, 72))).decode(),
        hosted=HostedSettings(billing=billing),
        **changes,
    )


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(JWT_SECRET, tenant=tenant, roles=[role])}"}


@attrs.frozen
class Served:
    """The running server, its client and the stand-in merchant sending to its webhook."""

    client: httpx.Client
    merchant: StandinMerchant

    def event(self, kind="subscription.activated", *, at=None, **fields) -> httpx.Response:
        """A signed subscription event for ``acme`` (the month from ``at`` unless a period is given)."""
        at = at or datetime.now(UTC)
        fields.setdefault("tenant_id", "acme")
        fields.setdefault("status", "active")
        fields.setdefault("price_ids", (SOLO,))
        fields.setdefault("period", (at, at + MONTH))
        return self.merchant.send(kind, occurred_at=at, **fields)

    def subscription(self) -> dict | None:
        runtime = self.client.app_runtime  # type: ignore[attr-defined]
        with runtime.store.unit_of_work() as uow:
            found = uow.subscriptions.get("acme")
        return None if found is None else attrs.asdict(found)


def _serve(app) -> tuple[uvicorn.Server, threading.Thread, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    return server, thread, f"http://{host}:{port}"


@pytest.fixture(params=["memory", "postgres"])
def served(request) -> Iterator[Served]:
    with StandinMerchant(api_key="key", webhook_secret=SECRET) as merchant:
        if request.param == "memory":
            app = create_app(settings(merchant.url), storage=MemoryStore(), start_workers=False)
        else:
            database = request.getfixturevalue("fresh_database")
            app = create_app(settings(merchant.url, database_url=database), start_workers=False)
        server, thread, base_url = _serve(app)
        merchant.webhook_url = base_url + WEBHOOK_PATH
        try:
            with httpx.Client(base_url=base_url, timeout=30.0) as client:
                client.app_runtime = app.state.runtime  # type: ignore[attr-defined]
                yield Served(client=client, merchant=merchant)
        finally:
            server.should_exit = True
            thread.join(30)


@pytest.mark.spec("§3.6 subscription-transitions", "§5 merchant-signature", "§6.3 merchant-events")
def test_a_signed_activation_makes_the_subscription_active(served):
    answer = served.event(event_id="evt_a")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"outcome": "applied", "event_id": "evt_a"}
    stored = served.subscription()
    assert (stored["plan"], stored["status"], stored["price_id"]) == ("solo", "active", SOLO)
    later = datetime.now(UTC) + timedelta(seconds=1)
    canceled = served.event("subscription.canceled", at=later, status="canceled", period=None)
    assert canceled.json()["outcome"] == "applied"
    assert served.subscription()["status"] == "canceled"


@pytest.mark.spec("§6.3 merchant-events", "C12 paddle-webhooks")
@pytest.mark.parametrize(
    "change",
    [
        {"price_ids": ("pri_team",)},
        {"tenant_id": None},
        {"period": None},
    ],
    ids=["unknown-price", "missing-tenant", "invalid-period"],
)
def test_an_invalid_event_is_400_webhook_rejected_and_changes_nothing(served, change):
    answer = served.event(**change)
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "webhook_rejected"
    assert answer.json()["errors"]
    assert served.subscription() is None


@pytest.mark.spec("§5 merchant-signature", "C12 paddle-webhooks")
def test_a_bad_or_stale_signature_is_400_and_changes_nothing(served):
    now = datetime.now(UTC)
    body = json.dumps(
        subscription_payload(
            "subscription.activated",
            tenant_id="acme",
            status="active",
            price_ids=(SOLO,),
            period=(now, now + MONTH),
            occurred_at=now,
            subscription_id="sub_1",
            customer_id="ctm_1",
        )
    ).encode()
    url = served.merchant.webhook_url
    for answer in (
        deliver(url, body, "another-secret"),
        deliver(url, body, SECRET, signed_at=now - timedelta(minutes=6)),
        served.client.post(
            WEBHOOK_PATH, content=body, headers={"Content-Type": "application/json"}
        ),
    ):
        assert answer.status_code == 400
        assert answer.json()["code"] == "webhook_rejected"
    assert served.subscription() is None
    assert deliver(url, body, SECRET).status_code == 200  # the same body, signed right


@pytest.mark.spec("§6.3 merchant-events")
def test_an_exact_replay_is_200_and_a_changed_replay_409(served):
    at = datetime.now(UTC)
    assert served.event(event_id="evt_r", at=at).json()["outcome"] == "applied"
    applied = served.subscription()
    again = served.event(event_id="evt_r", at=at)  # Paddle's retry: new notification id
    assert (again.status_code, again.json()["outcome"]) == (200, "duplicate")
    changed = served.event(event_id="evt_r", at=at, status="past_due")
    assert changed.status_code == 409
    assert changed.json()["code"] == "conflict"
    assert served.subscription() == applied


@pytest.mark.spec("§3.6 subscription-transitions", "§6.3 merchant-events")
def test_an_older_event_is_retained_not_applied(served):
    at = datetime.now(UTC)
    served.event(event_id="evt_new", at=at)
    applied = served.subscription()
    older = served.event(
        "subscription.canceled",
        event_id="evt_old",
        at=at - timedelta(minutes=1),
        status="canceled",
        period=None,
    )
    assert (older.status_code, older.json()["outcome"]) == (200, "retained")
    assert served.subscription() == applied


@pytest.mark.spec("§4.5 checkout-solo-only", "§3.6 trialing-gets-trial-quotas")
def test_checkout_answers_the_merchants_url_and_changes_nothing(served):
    answer = served.client.post(CHECKOUT, json={"plan": "solo"}, headers=auth())
    assert answer.status_code == 200, answer.text
    [checkout] = served.merchant.checkouts
    assert answer.json() == {"url": f"{served.merchant.url}/checkout/{checkout.transaction_id}"}
    assert (checkout.tenant_id, checkout.price_id) == ("acme", SOLO)
    assert served.subscription() is None  # a checkout is not access
    paid = httpx.post(answer.json()["url"] + "/pay")  # the stand-in's "Pay" sends the event
    assert paid.status_code == 200
    assert served.subscription()["status"] == "active"


@pytest.mark.spec("§4.5 checkout-solo-only", "§5 role-rules")
@pytest.mark.parametrize(
    ("body", "role", "status", "code"),
    [
        ({"plan": "team"}, "admin", 422, "plan_not_purchasable"),
        ({"plan": "scale"}, "admin", 422, "plan_not_purchasable"),
        ({"plan": "gold"}, "admin", 422, "plan_not_purchasable"),
        ({"plan": "solo", "price_id": "pri_x"}, "admin", 422, "validation_failed"),
        ({"plan": "solo"}, "analyst", 403, "forbidden"),
    ],
)
def test_a_checkout_other_than_solo_by_an_admin_is_refused(served, body, role, status, code):
    answer = served.client.post(CHECKOUT, json=body, headers=auth(role))
    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert served.merchant.checkouts == []


def test_the_portal_hands_off_to_the_merchant_customer_of_the_tenant(served):
    refused = served.client.post(PORTAL, headers=auth())
    assert (refused.status_code, refused.json()["code"]) == (409, "no_merchant_customer")
    served.event(customer_id="ctm_acme")
    answer = served.client.post(PORTAL, headers=auth())
    assert answer.json() == {"url": f"{served.merchant.url}/portal/ctm_acme"}
    assert served.client.post(PORTAL, headers=auth("analyst")).status_code == 403
    again = served.client.post(CHECKOUT, json={"plan": "solo"}, headers=auth())
    assert (again.status_code, again.json()["code"]) == (409, "already_subscribed")


def test_without_billing_the_routes_are_absent():
    plain = Settings(
        jwt_secret=JWT_SECRET, audit_signing_key=base64.b64encode(bytes(range(32))).decode()
    )
    with TestClient(create_app(plain, storage=MemoryStore(), start_workers=False)) as client:
        assert client.post(WEBHOOK_PATH, json={}).status_code == 404
        assert client.post(CHECKOUT, json={"plan": "solo"}, headers=auth()).status_code == 404
        assert WEBHOOK_PATH not in client.get("/openapi.json").json()["paths"]


def test_with_billing_the_api_document_describes_the_routes(served):
    paths = served.client.get("/openapi.json").json()["paths"]
    webhook = paths[WEBHOOK_PATH]["post"]
    assert "Paddle-Signature" in [param["name"] for param in webhook["parameters"]]
    assert "security" not in webhook or webhook["security"] == []
    assert {CHECKOUT, PORTAL} <= set(paths)
