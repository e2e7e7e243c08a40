"""SubscriptionRepository and MerchantEventRepository in memory."""

from ecp_core.billing.events import StoredMerchantEvent
from ecp_core.billing.model import Subscription
from ecp_core.errors import exists
from ecp_core.memory.tables import Repository, detached


class MemorySubscriptions(Repository):
    """One subscription per tenant, in memory."""

    @detached
    def get(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription, or None."""
        found: Subscription | None = self._t.table("subscriptions").get(tenant_id)
        return found

    def lock(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription (the store lock already serializes units of work)."""
        return self.get(tenant_id)

    def add(self, subscription: Subscription) -> None:
        """Store the tenant's first subscription."""
        if subscription.tenant_id in self._t.table("subscriptions"):
            raise exists("subscription", subscription.tenant_id)
        self._t.put("subscriptions", subscription.tenant_id, subscription)

    def save(self, subscription: Subscription) -> None:
        """Replace the tenant's subscription."""
        self._t.put("subscriptions", subscription.tenant_id, subscription)


class MemoryMerchantEvents(Repository):
    """Every accepted merchant event by id, in memory."""

    @detached
    def get(self, event_id: str) -> StoredMerchantEvent | None:
        """The event received under ``event_id``, or None."""
        found: StoredMerchantEvent | None = self._t.table("merchant_events").get(event_id)
        return found

    def add(self, event: StoredMerchantEvent) -> None:
        """Remember an accepted event (Conflict when its id is taken)."""
        if event.event_id in self._t.table("merchant_events"):
            raise exists("merchant event", event.event_id)
        self._t.put("merchant_events", event.event_id, event)
