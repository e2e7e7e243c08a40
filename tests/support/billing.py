"""Signed Paddle subscription events for the billing tests, and a billing service in memory.

The events are Paddle's JSON (``ecp_billing.standin.subscription_payload``) signed as Paddle
signs them; the service is the real one over the memory store with the real Paddle adapter, so
every test goes through signature verification and normalization.
"""

import json
from datetime import UTC, datetime, timedelta

import attrs

from ecp_billing import PaddleMerchant, signature_header, subscription_payload
from ecp_core.billing.service import BillingService, BillingSetup
from ecp_core.memory import MemoryStore
from ecp_core.system import FixedClock

SECRET = "pdl_ntfset_test_" + "s" * 24
SOLO = "pri_solo"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MONTH = timedelta(days=30)


def payload(
    event_type: str = "subscription.activated",
    *,
    event_id: str = "evt_1",
    tenant: str | None = "acme",
    status: str = "active",
    prices: tuple[str, ...] = (SOLO,),
    at: datetime = T0,
    period: tuple[datetime, datetime] | str | None = "month",
    subscription_id: str = "sub_1",
) -> dict:
    """A Paddle subscription event; ``period="month"`` is the month starting at ``at``."""
    return subscription_payload(
        event_type,
        tenant_id=tenant,
        status=status,
        price_ids=prices,
        period=(at, at + MONTH) if period == "month" else period,  # type: ignore[arg-type]
        occurred_at=at,
        subscription_id=subscription_id,
        customer_id="ctm_1",
        event_id=event_id,
    )


def body_of(event: dict) -> bytes:
    """The raw body Paddle would send."""
    return json.dumps(event).encode()


def signed(body: bytes, at: datetime, secret: str = SECRET) -> dict[str, str]:
    """The headers of a delivery of ``body`` signed at ``at``."""
    return {"paddle-signature": signature_header(secret, body, at)}


@attrs.define
class Billing:
    """A billing service in memory, its store and its clock."""

    service: BillingService
    store: MemoryStore
    clock: FixedClock

    def deliver(self, event: dict | bytes, *, secret: str = SECRET):
        """Deliver ``event`` signed now; the receipt (or the error raised)."""
        body = event if isinstance(event, bytes) else body_of(event)
        return self.service.receive(signed(body, self.clock.now(), secret), body)

    def subscription(self, tenant: str = "acme"):
        """The stored subscription of ``tenant``."""
        with self.store.unit_of_work() as uow:
            return uow.subscriptions.get(tenant)


def billing(merchant_url: str = "http://127.0.0.1:9", now: datetime = T0) -> Billing:
    """A fresh billing service in memory whose merchant API is at ``merchant_url``."""
    store = MemoryStore()
    clock = FixedClock(now)
    merchant = PaddleMerchant(base_url=merchant_url, api_key="key", webhook_secret=SECRET)
    setup = BillingSetup(merchant=merchant, solo_price_id=SOLO)
    return Billing(
        service=BillingService(store.unit_of_work, clock, setup), store=store, clock=clock
    )
