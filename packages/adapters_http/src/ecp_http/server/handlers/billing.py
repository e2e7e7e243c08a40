"""Hosted billing: the merchant webhook, checkout and the customer-portal hand-off.

Served only while ``ECP_BILLING_ENABLED`` is on (absent otherwise: 404). The webhook is public;
the ``Paddle-Signature`` over the raw body is its only authentication (spec "Authentication" 6).
"""

from ecp_core.billing.events import WebhookReceipt
from ecp_core.billing.model import CheckoutRequest, HandOff
from ecp_core.billing.service import BillingService
from ecp_core.errors import NotFound
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, HeaderParam, Operation
from ecp_http.server.services import Services

TAG = "billing"
WEBHOOK_PATH = "/v1/cloud/billing/merchant/webhook"


def _billing(services: Services) -> BillingService:
    if services.ecp.billing is None:  # the routes are only served with billing on
        raise NotFound("billing is not enabled")
    return services.ecp.billing


def merchant_webhook(call: Call, services: Services) -> WebhookReceipt:
    """Apply, retain or recognise a signed merchant event (400 rejected, 409 changed replay)."""
    return _billing(services).receive(call.headers, call.raw or b"")


def billing_checkout(call: Call, services: Services) -> HandOff:
    """The merchant's checkout URL for the Solo plan; the subscription does not change."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return _billing(services).checkout(call.actor, call.body)


def billing_portal(call: Call, services: Services) -> HandOff:
    """A customer-portal session URL for the tenant's merchant customer."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return _billing(services).portal(call.actor)


OPERATIONS = [
    Operation(
        method="POST",
        path=WEBHOOK_PATH,
        handler=merchant_webhook,
        operation_id="billing_merchant_webhook",
        tag=TAG,
        summary="Receive a signed merchant subscription event (Paddle Billing)",
        permission=None,
        public=True,
        raw_body=True,
        response=WebhookReceipt,
        extra_statuses=(400, 409),
        headers=(
            HeaderParam(
                name="Paddle-Signature",
                schema={"type": "string"},
                description="ts=<unix>;h1=<hex HMAC-SHA256 of '<ts>:<raw body>'>",
                required=True,
            ),
        ),
    ),
    Operation(
        method="POST",
        path="/v1/cloud/billing/checkout",
        handler=billing_checkout,
        operation_id="billing_checkout",
        tag=TAG,
        summary="Start a checkout for the Solo plan (the only plan that can be bought)",
        permission=Permission.BILLING_CHECKOUT,
        body=CheckoutRequest,
        response=HandOff,
        extra_statuses=(409, 502),
    ),
    Operation(
        method="POST",
        path="/v1/cloud/billing/portal",
        handler=billing_portal,
        operation_id="billing_portal",
        tag=TAG,
        summary="Open a customer-portal session at the merchant (ADR 0035)",
        permission=Permission.BILLING_CHECKOUT,
        response=HandOff,
        extra_statuses=(409, 502),
    ),
]
