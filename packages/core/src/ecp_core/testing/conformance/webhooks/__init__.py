"""Webhook repository: subscriptions, the delivery outbox and its attempts.

The samples (:mod:`.samples`) are re-exported: integration tests build the same values.
"""

from ecp_core.testing.conformance.webhooks.deliveries import WebhookDeliveryConformance
from ecp_core.testing.conformance.webhooks.health import WebhookDeliveryHealthConformance
from ecp_core.testing.conformance.webhooks.samples import attempt, delivery, ids, subscription
from ecp_core.testing.conformance.webhooks.secrets import WebhookSecretConformance
from ecp_core.testing.conformance.webhooks.subscriptions import WebhookSubscriptionConformance


class WebhookRepositoryConformance(
    WebhookSubscriptionConformance,
    WebhookSecretConformance,
    WebhookDeliveryConformance,
    WebhookDeliveryHealthConformance,
):
    """Webhooks: subscriptions and their secrets, the delivery outbox, its attempts and counts."""


__all__ = [
    "WebhookDeliveryConformance",
    "WebhookDeliveryHealthConformance",
    "WebhookRepositoryConformance",
    "WebhookSecretConformance",
    "WebhookSubscriptionConformance",
    "attempt",
    "delivery",
    "ids",
    "subscription",
]
