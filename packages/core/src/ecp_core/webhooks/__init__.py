"""Run-lifecycle webhooks: subscriptions, signed payloads and the retry schedule.

Delivery (outbox, worker, dead letters) builds on these in the webhooks issue.
"""

from ecp_core.webhooks.model import CreateSubscriptionRequest, WebhookEventPayload, WebhookEventType
from ecp_core.webhooks.schedule import RetrySchedule, next_delay
from ecp_core.webhooks.signing import SIGNATURE_HEADER, sign_body, signature_matches

__all__ = [
    "SIGNATURE_HEADER",
    "CreateSubscriptionRequest",
    "RetrySchedule",
    "WebhookEventPayload",
    "WebhookEventType",
    "next_delay",
    "sign_body",
    "signature_matches",
]
