"""The pure rules of merchant events: validity, staleness, and the subscription's next state.

Spec "Subscription and account" and "Inbound events": a webhook with an unknown price, missing
tenant metadata or an invalid period is rejected with no change; an event older than or as old
as the newest applied one is retained, not applied (the first wins on equal time); otherwise the
event's state becomes the subscription's.
"""

from datetime import datetime

from ecp_core.billing.events import MerchantEvent
from ecp_core.billing.model import PlanName, Subscription, SubscriptionStatus
from ecp_core.canonical import storable_text
from ecp_core.errors import FieldError

MAX_TENANT_ID = 512
"""The longest tenant id a subscription holds."""

PERIODLESS = frozenset({SubscriptionStatus.CANCELED, SubscriptionStatus.PAUSED})
"""States in which a subscription has no current billing period, so a null one is valid."""


def _tenant_problems(tenant_id: str | None) -> list[FieldError]:
    loc = ("data", "custom_data", "tenant_id")
    if not tenant_id:
        return [FieldError(loc=loc, msg="tenant metadata is missing")]
    if len(tenant_id) > MAX_TENANT_ID or not storable_text(tenant_id):
        return [FieldError(loc=loc, msg="not a tenant id")]
    return []


def _period_problems(event: MerchantEvent) -> list[FieldError]:
    loc = ("data", "current_billing_period")
    start, end = event.period_start, event.period_end
    if start is None and end is None:
        if event.status in PERIODLESS:
            return []
        return [FieldError(loc=loc, msg=f"a {event.status.value} subscription needs a period")]
    if start is None or end is None:
        return [FieldError(loc=loc, msg="a period has both a start and an end, or neither")]
    if end <= start:
        return [FieldError(loc=loc, msg="the period ends before it starts")]
    return []


def event_problems(event: MerchantEvent, solo_price_id: str) -> list[FieldError]:
    """Every reason ``event`` is invalid (an empty list: valid).

    Valid means: the configured Solo price is among the line items' prices, the tenant metadata
    is present, and the billing period is valid (both ends, the end after the start; null only
    for a canceled or paused subscription, ADR 0032).
    """
    problems = _tenant_problems(event.tenant_id)
    if solo_price_id not in event.price_ids:
        problems.append(FieldError(loc=("data", "items"), msg="no item has a known price"))
    return problems + _period_problems(event)


def is_stale(current: Subscription | None, event: MerchantEvent) -> bool:
    """Whether ``event`` is older than, or as old as, the newest event applied to ``current``."""
    if current is None or current.last_event_at is None:
        return False
    return event.occurred_at <= current.last_event_at


def next_subscription(
    current: Subscription | None, event: MerchantEvent, price_id: str, now: datetime
) -> Subscription:
    """The subscription after a valid, newer ``event`` (a new one when the tenant has none).

    The plan is Solo (the only price a valid event carries; a trialing state still gets Trial
    quotas, which the entitlements area decides). A period-less event keeps the last known
    period, so the meters keep their window.
    """
    assert event.tenant_id is not None  # noqa: S101 - a valid event names its tenant
    if event.period_start is not None:
        start, end = event.period_start, event.period_end
    elif current is not None:
        start, end = current.period_start, current.period_end
    else:
        start, end = event.occurred_at, None
    customer = event.merchant_customer_id
    if customer is None and current is not None:
        customer = current.merchant_customer_id
    return Subscription(
        tenant_id=event.tenant_id,
        plan=PlanName.SOLO,
        status=event.status,
        period_start=start,
        period_end=end,
        merchant_subscription_id=event.merchant_subscription_id,
        merchant_customer_id=customer,
        price_id=price_id,
        last_event_id=event.event_id,
        last_event_at=event.occurred_at,
        created_at=now if current is None else current.created_at,
        updated_at=now,
    )


__all__ = ["PERIODLESS", "event_problems", "is_stale", "next_subscription"]
