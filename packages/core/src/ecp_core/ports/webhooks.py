"""The webhook port: subscriptions, the delivery outbox and its attempts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.webhooks.health import DeliveryCounts, EndpointHealth
    from ecp_core.webhooks.model import (
        Delivery,
        DeliveryAttempt,
        DeliveryStatus,
        WebhookEventType,
        WebhookSubscription,
    )


class WebhookRepository(Protocol):
    """Subscriptions, the delivery outbox and its attempts."""

    def add_subscription(self, subscription: WebhookSubscription) -> None:
        """Store a new subscription."""
        ...

    def subscription(self, tenant_id: str, subscription_id: str) -> WebhookSubscription | None:
        """One live subscription of the tenant, or None."""
        ...

    def subscriptions(self, tenant_id: str) -> list[WebhookSubscription]:
        """The tenant's live subscriptions, oldest first."""
        ...

    def matching(
        self, tenant_id: str, deployment_ref: str, event_type: WebhookEventType
    ) -> list[WebhookSubscription]:
        """Live subscriptions of the deployment that asked for the event type."""
        ...

    def delete_subscription(self, tenant_id: str, subscription_id: str) -> bool:
        """Stop a subscription (its deliveries stay); False when there was none."""
        ...

    def rotate_secret(
        self, tenant_id: str, subscription_id: str, secret: str, previous_expires_at: datetime
    ) -> WebhookSubscription | None:
        """Make ``secret`` current; the current one signs beside it until ``previous_expires_at``.

        An older previous secret is dropped (at most two sign). Atomic against concurrent
        rotations; None when the tenant has no such live subscription.
        """
        ...

    def drop_expired_secrets(self, now: datetime) -> int:
        """Forget previous secrets whose overlap ended by ``now``; return how many were dropped."""
        ...

    def add_delivery(self, delivery: Delivery) -> None:
        """Queue a delivery."""
        ...

    def delivery(self, tenant_id: str, delivery_id: str) -> Delivery | None:
        """One delivery of the tenant, or None."""
        ...

    def save_delivery(self, delivery: Delivery) -> None:
        """Replace a stored delivery."""
        ...

    def claim_due(self, now: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries due by ``now``, oldest first, held against other workers until commit."""
        ...

    def next_due(self) -> datetime | None:
        """When the earliest pending delivery is due (its next attempt); None when none waits."""
        ...

    def add_attempt(self, attempt: DeliveryAttempt) -> None:
        """Record one POST of a delivery."""
        ...

    def attempts(self, tenant_id: str, delivery_id: str) -> list[DeliveryAttempt]:
        """A delivery's attempts in order."""
        ...

    def dead_letters(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """The tenant's dead deliveries, newest first, older than delivery id ``before``."""
        ...

    def deliveries(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: str | None = None,
        status: DeliveryStatus | None = None,
    ) -> list[Delivery]:
        """The tenant's deliveries by id, newest first, older than ``before``, of one status."""
        ...

    def endpoint_health(self, tenant_id: str, since: datetime) -> list[EndpointHealth]:
        """Per subscription, its deliveries queued since ``since`` by status, and the last answer.

        Only subscriptions with such deliveries are listed, by subscription id.
        """
        ...

    def delivery_counts(self, tenant_id: str, since: datetime) -> DeliveryCounts:
        """The tenant's outbox figures: pending now, and attempts and deliveries since ``since``.

        Attempts are classified by :func:`ecp_core.webhooks.health.attempt_outcome`.
        """
        ...


class WithWebhooks(Protocol):
    """A unit of work that reaches the webhook subscriptions and deliveries."""

    @property
    def webhooks(self) -> WebhookRepository:
        """The webhook subscriptions and deliveries."""
        ...


class WebhooksUnit(Transaction, WithDeployments, WithWebhooks, Protocol):
    """What the webhook use cases need."""


__all__ = ["WebhookRepository", "WebhooksUnit", "WithWebhooks"]
