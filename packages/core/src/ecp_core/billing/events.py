"""Merchant events as the core sees them: one normalized shape, whatever the merchant's format.

The merchant adapter verifies the signature over the raw body and turns the merchant's JSON into
a :class:`MerchantEvent`; the rules in :mod:`ecp_core.billing.rules` decide what it does. Every
accepted event is remembered as a :class:`StoredMerchantEvent` so that a retry is recognised
(spec "Inbound events").
"""

import enum
from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.billing.model import SubscriptionStatus
from ecp_core.constraints import AwareUtc, Text, checked


class MerchantEventType(enum.StrEnum):
    """The subscription lifecycle events the merchant sends (CONTRACT "Hosted offer")."""

    CREATED = "subscription.created"
    ACTIVATED = "subscription.activated"
    UPDATED = "subscription.updated"
    PAST_DUE = "subscription.past_due"
    PAUSED = "subscription.paused"
    RESUMED = "subscription.resumed"
    CANCELED = "subscription.canceled"
    TRIALING = "subscription.trialing"


@attrs.frozen(kw_only=True, field_transformer=checked)
class MerchantEvent:
    """One signed subscription event, normalized.

    ``tenant_id`` comes from the custom data the server put on the checkout (None when missing);
    ``price_ids`` lists the price of every line item; a null billing period is allowed where
    :func:`ecp_core.billing.rules.event_problems` says (ADR 0032). ``digest`` identifies the
    event's content, so that an exact retry and a changed replay can be told apart.
    """

    event_id: Annotated[str, Text(1, 256)]
    event_type: MerchantEventType
    occurred_at: Annotated[datetime, AwareUtc()]
    tenant_id: str | None
    merchant_subscription_id: Annotated[str, Text(1, 256)]
    merchant_customer_id: str | None
    status: SubscriptionStatus
    price_ids: tuple[str, ...]
    period_start: Annotated[datetime, AwareUtc()] | None
    period_end: Annotated[datetime, AwareUtc()] | None
    digest: Annotated[str, Text(1, 128)]


class EventOutcome(enum.StrEnum):
    """What receiving a merchant event did."""

    APPLIED = "applied"
    """The event was newer than the stored state: the subscription moved."""
    RETAINED = "retained"
    """The event was older than, or as old as, the newest applied one: kept, not applied."""
    DUPLICATE = "duplicate"
    """An exact retry of an event already received: nothing changed."""
    IGNORED = "ignored"
    """A signed event of a type the service does not act on (not a subscription event)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class StoredMerchantEvent:
    """An accepted merchant event, kept by id with its digest (applied or retained)."""

    event_id: Annotated[str, Text(1, 256)]
    digest: Annotated[str, Text(1, 128)]
    tenant_id: Annotated[str, Text(1, 512)]
    event_type: MerchantEventType
    merchant_subscription_id: Annotated[str, Text(1, 256)]
    occurred_at: Annotated[datetime, AwareUtc()]
    applied: bool
    received_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True)
class WebhookReceipt:
    """The answer to a merchant webhook: what the event did (``event_id`` None when ignored)."""

    outcome: EventOutcome
    """What the event did: applied, retained, a duplicate, or ignored."""
    event_id: str | None = None


__all__ = [
    "EventOutcome",
    "MerchantEvent",
    "MerchantEventType",
    "StoredMerchantEvent",
    "WebhookReceipt",
]
