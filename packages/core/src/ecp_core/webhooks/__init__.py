"""Run-lifecycle webhooks: subscriptions, signed payloads, secret rotation and the retry schedule.

Deliveries carry ``X-Service-Signature`` and the Standard Webhooks headers (ADR 0012, ADR 0054).
"""

from ecp_core.webhooks.model import (
    CreateSubscriptionRequest,
    WebhookEventPayload,
    WebhookEventType,
)
from ecp_core.webhooks.schedule import RetrySchedule, next_delay
from ecp_core.webhooks.signing import (
    SECRET_PREFIX,
    SIGNATURE_HEADER,
    new_secret,
    sign_body,
    signature_matches,
    signing_key,
    standard_signature,
)

__all__ = [
    "SECRET_PREFIX",
    "SIGNATURE_HEADER",
    "CreateSubscriptionRequest",
    "RetrySchedule",
    "WebhookEventPayload",
    "WebhookEventType",
    "new_secret",
    "next_delay",
    "sign_body",
    "signature_matches",
    "signing_key",
    "standard_signature",
]
