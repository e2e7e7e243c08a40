"""SubscriptionRepository and MerchantEventRepository on PostgreSQL.

One subscription row per tenant, locked with FOR UPDATE; one merchant-event row per accepted
event id.
"""

from ecp_core.billing.events import StoredMerchantEvent
from ecp_core.billing.model import Subscription
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

SUBSCRIPTIONS = Table("ecp_subscriptions", Subscription)
MERCHANT_EVENTS = Table("ecp_merchant_events", StoredMerchantEvent)


class PostgresSubscriptions(Repository):
    """One subscription per tenant."""

    def get(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription, or None."""
        return self._one(SUBSCRIPTIONS, "tenant_id = %s", (tenant_id,))

    def lock(self, tenant_id: str) -> Subscription | None:
        """The tenant's subscription, locked until the transaction ends, or None."""
        return self._one(SUBSCRIPTIONS, "tenant_id = %s FOR UPDATE", (tenant_id,))

    def add(self, subscription: Subscription) -> None:
        """Store the tenant's first subscription (Conflict when it has one)."""
        self._insert(SUBSCRIPTIONS, subscription, exists("subscription", subscription.tenant_id))

    def save(self, subscription: Subscription) -> None:
        """Replace the tenant's subscription."""
        self._conn.execute(
            SUBSCRIPTIONS.update_sql("tenant_id"), SUBSCRIPTIONS.params(subscription)
        )


class PostgresMerchantEvents(Repository):
    """Every accepted merchant event by id."""

    def get(self, event_id: str) -> StoredMerchantEvent | None:
        """The event received under ``event_id``, or None."""
        return self._one(MERCHANT_EVENTS, "event_id = %s", (event_id,))

    def add(self, event: StoredMerchantEvent) -> None:
        """Remember an accepted event (Conflict when its id is taken)."""
        self._insert(MERCHANT_EVENTS, event, exists("merchant event", event.event_id))
