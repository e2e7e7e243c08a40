"""The billing port: tenants' subscriptions (the billing area adds its merchant ports here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
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


class BillingUnit(Transaction, WithSubscriptions, Protocol):
    """What the billing use cases need."""


__all__ = ["BillingUnit", "SubscriptionRepository", "WithSubscriptions"]
