"""SubscriptionRepository on PostgreSQL: one row per tenant, locked with FOR UPDATE."""

from ecp_core.billing.model import Subscription
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

SUBSCRIPTIONS = Table("ecp_subscriptions", Subscription)


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
