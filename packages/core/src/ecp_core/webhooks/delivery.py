"""One delivery attempt: the signed request, the receiver's answer and what comes next."""

import json
import logging
from datetime import datetime, timedelta
from typing import Any

import attrs

from ecp_core.ports.system import Clock, HttpAnswer, HttpSender
from ecp_core.ports.webhooks import WebhooksUnit
from ecp_core.webhooks.model import (
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    WebhookEventPayload,
    WebhookSubscription,
)
from ecp_core.webhooks.schedule import RetrySchedule, next_delay
from ecp_core.webhooks.signing import (
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    sign_body,
    standard_headers,
)
from ecp_core.wire import unstructure

log = logging.getLogger("ecp_core.webhooks")


def encode(payload: WebhookEventPayload) -> bytes:
    """The exact bytes sent and signed (compact JSON, keys in a stable order)."""
    return json.dumps(unstructure(payload), separators=(",", ":"), sort_keys=True).encode("utf-8")


def signed_headers(
    subscription: WebhookSubscription, delivery: Delivery, body: bytes, now: datetime
) -> dict[str, str]:
    """The headers of one attempt sent at ``now``.

    ``X-Service-Signature`` is signed with the current secret alone; ``webhook-signature``
    carries one signature per secret that signs at ``now`` (ADR 0054).
    """
    return {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign_body(subscription.secret, body),
        EVENT_ID_HEADER: delivery.event_id,
        EVENT_TYPE_HEADER: str(delivery.event_type),
        **standard_headers(
            subscription.signing_secrets(now), delivery.event_id, int(now.timestamp()), body
        ),
    }


def attempt_delivery(
    uow: WebhooksUnit,
    sender: HttpSender,
    delivery: Delivery,
    *,
    clock: Clock,
    policy: RetrySchedule,
) -> None:
    """POST ``delivery`` once and record the attempt: delivered, retried later, or dead."""
    subscription = uow.webhooks.subscription(delivery.tenant_id, delivery.subscription_id)
    number = delivery.attempts + 1
    if subscription is None:
        answer = HttpAnswer(error="the subscription was deleted")
    else:
        body = encode(delivery.payload)
        headers = signed_headers(subscription, delivery, body, clock.now())
        answer = sender.post(subscription.target_url, body, headers)
    now = clock.now()
    uow.webhooks.add_attempt(
        DeliveryAttempt(
            delivery_id=delivery.delivery_id,
            attempt=number,
            occurred_at=now,
            status_code=answer.status_code,
            error=answer.error,
        )
    )
    facts: dict[str, Any] = {
        "tenant_id": delivery.tenant_id,
        "delivery_id": delivery.delivery_id,
        "event_type": str(delivery.event_type),
        "attempt": number,
        "status_code": answer.status_code,
        "error": answer.error,
    }
    if answer.delivered:
        status, next_at = DeliveryStatus.DELIVERED, delivery.next_attempt_at
        log.info("webhook delivered", extra=facts)
    elif subscription is None or number >= policy.max_attempts:
        status, next_at = DeliveryStatus.DEAD, delivery.next_attempt_at
        log.warning("webhook dead letter", extra=facts)
    else:
        wait = next_delay(policy, number, retry_after=answer.retry_after)
        status, next_at = DeliveryStatus.PENDING, now + timedelta(seconds=wait)
        log.info("webhook retry", extra={**facts, "retry_in_seconds": wait})
    uow.webhooks.save_delivery(
        attrs.evolve(
            delivery,
            status=status,
            attempts=number,
            next_attempt_at=next_at,
            updated_at=now,
            last_status_code=answer.status_code,
            last_error=answer.error,
        )
    )
