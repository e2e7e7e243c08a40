"""WebhookRepository in memory."""

from datetime import datetime

import attrs

from ecp_core.errors import exists, missing
from ecp_core.memory.tables import Repository, detached
from ecp_core.webhooks.health import (
    AttemptOutcome,
    DeliveryCounts,
    EndpointHealth,
    attempt_outcome,
)
from ecp_core.webhooks.model import (
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    WebhookEventType,
    WebhookSubscription,
)


class MemoryWebhooks(Repository):
    """Subscriptions, deliveries and attempts in memory."""

    def add_subscription(self, subscription: WebhookSubscription) -> None:
        """Store a new subscription."""
        if subscription.subscription_id in self._t.table("webhook_subscriptions"):
            raise exists("subscription", subscription.subscription_id)
        self._t.put("webhook_subscriptions", subscription.subscription_id, subscription)

    @detached
    def subscription(self, tenant_id: str, subscription_id: str) -> WebhookSubscription | None:
        """One live subscription, or None."""
        found: WebhookSubscription | None = self._t.table("webhook_subscriptions").get(
            subscription_id
        )
        return found if found is not None and found.tenant_id == tenant_id else None

    @detached
    def subscriptions(self, tenant_id: str) -> list[WebhookSubscription]:
        """Live subscriptions, oldest first."""
        found = [
            s for s in self._t.table("webhook_subscriptions").values() if s.tenant_id == tenant_id
        ]
        return sorted(found, key=lambda s: (s.created_at, s.subscription_id))

    def matching(
        self, tenant_id: str, deployment_ref: str, event_type: WebhookEventType
    ) -> list[WebhookSubscription]:
        """Live subscriptions of the deployment that asked for the event type."""
        return [
            s
            for s in self.subscriptions(tenant_id)
            if s.deployment_ref == deployment_ref and event_type in s.event_types
        ]

    def delete_subscription(self, tenant_id: str, subscription_id: str) -> bool:
        """Stop a subscription."""
        if self.subscription(tenant_id, subscription_id) is None:
            return False
        self._t.remove("webhook_subscriptions", subscription_id)
        return True

    @detached
    def rotate_secret(
        self, tenant_id: str, subscription_id: str, secret: str, previous_expires_at: datetime
    ) -> WebhookSubscription | None:
        """Make ``secret`` current; the current one signs beside it until ``previous_expires_at``."""
        current = self.subscription(tenant_id, subscription_id)
        if current is None:
            return None
        rotated = attrs.evolve(
            current,
            secret=secret,
            previous_secret=current.secret,
            previous_secret_expires_at=previous_expires_at,
        )
        self._t.put("webhook_subscriptions", subscription_id, rotated)
        return rotated

    def drop_expired_secrets(self, now: datetime) -> int:
        """Forget previous secrets whose overlap ended by ``now``."""
        expired = [
            s
            for s in self._t.table("webhook_subscriptions").values()
            if s.previous_secret_expires_at is not None and s.previous_secret_expires_at <= now
        ]
        for subscription in expired:
            self._t.put(
                "webhook_subscriptions",
                subscription.subscription_id,
                attrs.evolve(subscription, previous_secret=None, previous_secret_expires_at=None),
            )
        return len(expired)

    def add_delivery(self, delivery: Delivery) -> None:
        """Queue a delivery."""
        if delivery.delivery_id in self._t.table("webhook_deliveries"):
            raise exists("delivery", delivery.delivery_id)
        self._t.put("webhook_deliveries", delivery.delivery_id, delivery)

    @detached
    def delivery(self, tenant_id: str, delivery_id: str) -> Delivery | None:
        """One delivery, or None."""
        found: Delivery | None = self._t.table("webhook_deliveries").get(delivery_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    def save_delivery(self, delivery: Delivery) -> None:
        """Replace a stored delivery."""
        if self.delivery(delivery.tenant_id, delivery.delivery_id) is None:
            raise missing("delivery", delivery.delivery_id)
        self._t.put("webhook_deliveries", delivery.delivery_id, delivery)

    @detached
    def claim_due(self, now: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries due by ``now``, oldest first."""
        due = [
            d
            for d in self._t.table("webhook_deliveries").values()
            if d.status is DeliveryStatus.PENDING and d.next_attempt_at <= now
        ]
        return sorted(due, key=lambda d: (d.next_attempt_at, d.delivery_id))[:limit]

    def next_due(self) -> datetime | None:
        """The earliest next attempt of a pending delivery."""
        pending = [
            d.next_attempt_at
            for d in self._t.table("webhook_deliveries").values()
            if d.status is DeliveryStatus.PENDING
        ]
        return min(pending, default=None)

    def add_attempt(self, attempt: DeliveryAttempt) -> None:
        """Record one POST."""
        self._t.append("webhook_attempts", attempt.delivery_id, attempt)

    @detached
    def attempts(self, tenant_id: str, delivery_id: str) -> list[DeliveryAttempt]:
        """A delivery's attempts in order."""
        if self.delivery(tenant_id, delivery_id) is None:
            return []
        return list(self._t.table("webhook_attempts").get(delivery_id, []))

    @detached
    def dead_letters(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """Dead deliveries, newest first."""
        dead = sorted(
            (
                d
                for d in self._t.table("webhook_deliveries").values()
                if d.tenant_id == tenant_id and d.status is DeliveryStatus.DEAD
            ),
            key=lambda d: d.delivery_id,
            reverse=True,
        )
        if before is not None:
            dead = [d for d in dead if d.delivery_id < before]
        return dead[:limit]

    @detached
    def deliveries(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: str | None = None,
        status: DeliveryStatus | None = None,
    ) -> list[Delivery]:
        """The tenant's deliveries, newest first, of one status when given."""
        found = sorted(
            (
                d
                for d in self._t.table("webhook_deliveries").values()
                if d.tenant_id == tenant_id
                and (status is None or d.status is status)
                and (before is None or d.delivery_id < before)
            ),
            key=lambda d: d.delivery_id,
            reverse=True,
        )
        return found[:limit]

    def endpoint_health(self, tenant_id: str, since: datetime) -> list[EndpointHealth]:
        """Per subscription, its deliveries queued since ``since`` by status, and the last answer."""
        by_subscription: dict[str, list[Delivery]] = {}
        for d in self._t.table("webhook_deliveries").values():
            if d.tenant_id == tenant_id and d.created_at >= since:
                by_subscription.setdefault(d.subscription_id, []).append(d)
        found = []
        for subscription_id in sorted(by_subscription):
            mine = by_subscription[subscription_id]
            tried = sorted(
                (d for d in mine if d.attempts > 0), key=lambda d: (d.updated_at, d.delivery_id)
            )
            found.append(
                EndpointHealth(
                    subscription_id=subscription_id,
                    pending=sum(d.status is DeliveryStatus.PENDING for d in mine),
                    delivered=sum(d.status is DeliveryStatus.DELIVERED for d in mine),
                    dead=sum(d.status is DeliveryStatus.DEAD for d in mine),
                    last_status_code=tried[-1].last_status_code if tried else None,
                    last_attempt_at=tried[-1].updated_at if tried else None,
                )
            )
        return found

    def delivery_counts(self, tenant_id: str, since: datetime) -> DeliveryCounts:
        """The tenant's outbox figures: pending now, and attempts and deliveries since ``since``.

        Test events are not counted (ADR 0054). Like the SQL, attempts are looked for only in deliveries updated since ``since`` (an
        attempt updates its delivery at the attempt's time, so none is missed).
        """
        mine = [
            d
            for d in self._t.table("webhook_deliveries").values()
            if d.tenant_id == tenant_id and d.event_type is not WebhookEventType.WEBHOOK_TEST
        ]
        attempts = [
            attempt
            for d in mine
            if d.updated_at >= since
            for attempt in self._t.table("webhook_attempts").get(d.delivery_id, [])
            if attempt.occurred_at >= since
        ]
        outcomes = [attempt_outcome(attempt.status_code) for attempt in attempts]
        return DeliveryCounts(
            queue_depth=sum(d.status is DeliveryStatus.PENDING for d in mine),
            queued=sum(d.created_at >= since for d in mine),
            delivered=outcomes.count(AttemptOutcome.DELIVERED),
            retried=sum(attempt.attempt > 1 for attempt in attempts),
            rejected=outcomes.count(AttemptOutcome.REJECTED),
            failed=outcomes.count(AttemptOutcome.FAILED),
            abandoned=sum(d.status is DeliveryStatus.DEAD and d.updated_at >= since for d in mine),
        )
