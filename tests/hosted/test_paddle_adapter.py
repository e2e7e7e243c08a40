"""The Paddle adapter: signature verification, event normalization, and its API calls.

The API calls go to the loopback stand-in merchant, a real HTTP server on 127.0.0.1.
"""

import json
from datetime import timedelta

import httpx
import pytest
from tests.support.billing import SECRET, SOLO, T0, body_of, payload

from ecp_billing import PaddleMerchant, StandinMerchant, normalized, signature_header, verify
from ecp_core.billing.events import MerchantEventType
from ecp_core.billing.model import SubscriptionStatus
from ecp_core.errors import MerchantUnavailable, WebhookRejected

pytestmark = pytest.mark.unit

BODY = body_of(payload())


@pytest.mark.spec("C12 paddle-webhooks", "C6 provider-adapters")
def test_a_body_signed_within_five_minutes_either_way_verifies():
    for skew in (0, 300, -300):
        verify(SECRET, signature_header(SECRET, BODY, T0 + timedelta(seconds=skew)), BODY, T0)


@pytest.mark.spec("C12 paddle-webhooks")
@pytest.mark.parametrize("skew", [301, -301, 86_400])
def test_a_signature_more_than_five_minutes_away_is_rejected(skew):
    header = signature_header(SECRET, BODY, T0 + timedelta(seconds=skew))
    with pytest.raises(WebhookRejected):
        verify(SECRET, header, BODY, T0)


@pytest.mark.spec("C12 paddle-webhooks")
def test_one_matching_h1_among_several_is_enough():
    header = signature_header("old-secret", BODY, T0, extra=(SECRET,))
    assert header.count("h1=") == 2
    verify(SECRET, header, BODY, T0)
    with pytest.raises(WebhookRejected):
        verify("third-secret", header, BODY, T0)


@pytest.mark.spec("§5 merchant-signature")
@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "h1=00",
        "ts=1772366400",
        "ts=1772366400;ts=1772366400;h1=00",
        "ts=abc;h1=00",
        "ts=1772366400;h1",
        "ts=" + "9" * 5000 + ";h1=00",
        "ts=1772366400;h1=" + "0" * 64,
    ],
)
def test_a_missing_malformed_or_wrong_signature_is_rejected(header):
    with pytest.raises(WebhookRejected) as rejected:
        verify(SECRET, header, BODY, T0)
    assert rejected.value.errors[0].loc == ("headers", "Paddle-Signature")


@pytest.mark.spec("C6 provider-adapters")
def test_a_subscription_event_is_normalized_with_every_line_items_price():
    event = payload(prices=("pri_addon", SOLO))
    event["data"]["items"][1] = {"price_id": SOLO, "quantity": 1}  # the price given by id only
    found = normalized(body_of(event))
    assert found.event_type is MerchantEventType.ACTIVATED
    assert (found.event_id, found.occurred_at, found.tenant_id) == ("evt_1", T0, "acme")
    assert (found.merchant_subscription_id, found.merchant_customer_id) == ("sub_1", "ctm_1")
    assert found.status is SubscriptionStatus.ACTIVE
    assert found.price_ids == ("pri_addon", SOLO)
    assert found.period_start == T0


def test_a_null_period_and_missing_custom_data_normalize_to_none():
    event = payload(tenant=None, period=None, status="canceled")
    found = normalized(body_of(event))
    assert (found.tenant_id, found.period_start, found.period_end) == (None, None, None)
    event["data"]["custom_data"] = {"tenant_id": 7}
    assert normalized(body_of(event)).tenant_id is None


def test_the_digest_ignores_the_notification_id_only():
    event = payload()
    digest = normalized(body_of(event)).digest
    assert normalized(body_of({**event, "notification_id": "ntf_2"})).digest == digest
    assert normalized(json.dumps(event, indent=2).encode()).digest == digest
    assert normalized(body_of(payload(status="past_due"))).digest != digest


def test_other_event_types_are_not_subscription_events():
    assert normalized(body_of({"event_type": "transaction.completed", "data": {}})) is None


@pytest.mark.parametrize(
    ("mutate", "loc"),
    [
        (lambda e: e.pop("event_id"), ("event_id",)),
        (lambda e: e.update(occurred_at="yesterday"), ("occurred_at",)),
        (lambda e: e["data"].update(status="frozen"), ("data", "status")),
        (lambda e: e["data"].pop("id"), ("data", "id")),
        (lambda e: e["data"].update(items={}), ("data", "items")),
        (lambda e: e["data"]["items"][0].pop("price"), ("data", "items", 0)),
        (lambda e: e.update(data=[]), ("data",)),
    ],
)
def test_an_unreadable_event_is_rejected_naming_the_field(mutate, loc):
    event = payload()
    mutate(event)
    with pytest.raises(WebhookRejected) as rejected:
        normalized(body_of(event))
    assert rejected.value.errors[0].loc == loc


@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b'{"a": 1, "a": 2}'])
def test_a_body_that_is_not_an_event_object_is_rejected(body):
    with pytest.raises(WebhookRejected):
        normalized(body)


@pytest.fixture
def merchant():
    with StandinMerchant(api_key="key", webhook_secret=SECRET) as standin:
        yield standin


@pytest.mark.spec("C6 provider-adapters")
def test_a_checkout_is_a_transaction_for_the_price_carrying_the_tenant(merchant):
    paddle = PaddleMerchant(base_url=merchant.url, api_key="key", webhook_secret=SECRET)
    url = paddle.checkout("acme", SOLO, None)
    [checkout] = merchant.checkouts
    assert (checkout.tenant_id, checkout.price_id) == ("acme", SOLO)
    assert url == f"{merchant.url}/checkout/{checkout.transaction_id}"
    assert "Pay" in httpx.get(url).text
    paddle.checkout("acme", SOLO, "ctm_7")
    assert merchant.checkouts[1].customer_id == "ctm_7"


def test_a_portal_session_is_opened_for_the_customer(merchant):
    paddle = PaddleMerchant(base_url=merchant.url, api_key="key", webhook_secret=SECRET)
    assert paddle.portal("ctm/1", "sub_1") == f"{merchant.url}/portal/ctm%2F1"
    assert merchant.portal_customers == ["ctm%2F1"]


def test_a_refused_or_unreachable_merchant_is_unavailable(merchant):
    wrong_key = PaddleMerchant(base_url=merchant.url, api_key="nope", webhook_secret=SECRET)
    with pytest.raises(MerchantUnavailable) as refused:
        wrong_key.checkout("acme", SOLO, None)
    assert "nope" not in refused.value.detail
    assert merchant.refused == 1
    assert merchant.checkouts == []
    gone = PaddleMerchant(base_url="http://127.0.0.1:9", api_key="key", webhook_secret=SECRET)
    with pytest.raises(MerchantUnavailable):
        gone.portal("ctm_1", None)
