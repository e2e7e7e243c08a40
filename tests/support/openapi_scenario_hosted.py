"""The scenario's hosted calls: login, refresh, checkout, the merchant's event, portal (ADR 0055).

They run on a second server, the hosted one: login at the loopback stand-in identity provider,
billing at the loopback stand-in merchant. The browser is the test client, which keeps the
cookies the server sets: the login cookie, then the session that pays. The merchant's event is
signed with the webhook secret the hosted server is given (:data:`MERCHANT_SECRET`).
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
from tests.support.openapi_scenario import Step

from ecp_billing import signature_header, subscription_payload
from ecp_billing.standin import MONTH, paddle_id

MERCHANT_SECRET = "pdl_ntfset_examples_" + "m" * 24
"""The secret of the hosted server's merchant webhook destination."""
SOLO_PRICE = "pri_01solo"
"""The merchant's price of the Solo plan."""


def through_the_provider(location: str) -> Mapping[str, Any]:
    """Follow the login's redirect to the provider, which sends the browser back with a code."""
    answered = httpx.get(location, follow_redirects=False, timeout=10.0)
    assert answered.is_redirect, answered.text
    back = urlsplit(answered.headers["location"])
    return {"callback": dict(parse_qsl(back.query))}


def activated(ids: Mapping[str, Any]) -> dict[str, Any]:
    """The merchant's ``subscription.activated`` event for the tenant that checked out."""
    now = datetime.now(UTC)
    return subscription_payload(
        "subscription.activated",
        tenant_id=ids["tenant_id"],
        status="active",
        price_ids=(SOLO_PRICE,),
        period=(now, now + MONTH),
        occurred_at=now,
        subscription_id=paddle_id("sub"),
        customer_id=paddle_id("ctm"),
    )


def signed(body: bytes) -> Mapping[str, str]:
    """The ``Paddle-Signature`` of ``body``, signed now."""
    return {"Paddle-Signature": signature_header(MERCHANT_SECRET, body, datetime.now(UTC))}


HOSTED = [
    Step("cloud_auth_login", role=None, redirected=through_the_provider),
    Step(
        "cloud_auth_callback",
        role=None,
        query=lambda ids: ids["callback"],
        keep=lambda login: {"tenant_id": login["session"]["tenant_id"]},
    ),
    Step("cloud_auth_refresh", role=None),
    Step("billing_checkout", {"plan": "solo"}, role=None),
    Step("billing_merchant_webhook", activated, role=None, signed=signed),
    Step("billing_portal", role=None),
]
"""The first login (a trial and a key), a renewed session, then Solo bought and managed."""
