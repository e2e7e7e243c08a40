"""The billing ports: tenants' subscriptions, the merchant events received, and the merchant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from ecp_core.billing.events import MerchantEvent, StoredMerchantEvent
    from ecp_core.billing.model import Subscription


class SubscriptionRepository(Protocol):
    """One subscription per tenant."""

    def get(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription, or None (no hosted account)."""
        ...

    def lock(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription, held until the unit of work ends, or None."""
        ...

    def add(self, subscription: Subscription) -> None:
        """Store the tenant's first subscription (Conflict when it has one)."""
        ...

    def save(self, subscription: Subscription) -> None:
        """Replace the tenant's subscription."""
        ...


class WithSubscriptions(Protocol):
    """A unit of work that reaches the subscriptions."""

    @property
    def subscriptions(self) -> SubscriptionRepository:
        """The subscriptions."""
        ...


class MerchantEventRepository(Protocol):
    """Every accepted merchant event by id, with its digest: the memory of retries."""

    def get(self, event_id: str) -> StoredMerchantEvent | None:
        """The event received under ``event_id``, or None."""
        ...

    def add(self, event: StoredMerchantEvent) -> None:
        """Remember an accepted event (Conflict when its id is taken)."""
        ...


class WithMerchantEvents(Protocol):
    """A unit of work that reaches the merchant events received."""

    @property
    def merchant_events(self) -> MerchantEventRepository:
        """The merchant events received."""
        ...


class BillingUnit(Transaction, WithSubscriptions, WithMerchantEvents, Protocol):
    """What the billing use cases need."""


class Merchant(Protocol):
    """The merchant of record: signed events in, checkout and customer-portal hand-offs out.

    An adapter raises WebhookRejected for a body it cannot trust or read, and
    MerchantUnavailable when the merchant cannot be reached or answers with an error.
    """

    def event(self, headers: Mapping[str, str], body: bytes, now: datetime) -> MerchantEvent | None:
        """The subscription event in a webhook, its signature verified at ``now``.

        ``headers`` have lower-case names. None: a correctly signed event of another kind (the
        service acknowledges it and does nothing).
        """
        ...

    def checkout(self, tenant_id: str, price_id: str, customer_id: str | None) -> str:
        """Open a checkout for ``price_id`` carrying ``tenant_id`` as metadata; its URL."""
        ...

    def portal(self, customer_id: str, subscription_id: str | None) -> str:
        """Open a customer-portal session for the merchant's customer; its URL."""
        ...


__all__ = [
    "BillingUnit",
    "Merchant",
    "MerchantEventRepository",
    "SubscriptionRepository",
    "WithMerchantEvents",
    "WithSubscriptions",
]
