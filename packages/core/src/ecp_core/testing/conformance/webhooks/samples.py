"""Samples the webhook suite stores: a subscription, a delivery of run.completed, an attempt."""

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from ecp_core.testing.samples import NOW
from ecp_core.webhooks.model import (
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    WebhookEventPayload,
    WebhookEventType,
    WebhookSubscription,
)

STARTED = WebhookEventType.RUN_STARTED

COMPLETED = WebhookEventType.RUN_COMPLETED

REQUESTED = WebhookEventType.APPROVAL_REQUESTED


def subscription(
    subscription_id: str = "sub-1",
    tenant: str = "t1",
    ref: str = "dep",
    events: tuple[WebhookEventType, ...] = (STARTED, COMPLETED),
    offset: int = 0,
    secret: str = "whsec-0123456789abcdef",  # noqa: S107 - a sample
) -> WebhookSubscription:
    """A subscription of deployment ``ref`` made ``offset`` seconds after :data:`NOW`."""
    return WebhookSubscription(
        subscription_id=subscription_id,
        tenant_id=tenant,
        deployment_ref=ref,
        target_url="https://hooks.example/é?x=1",
        event_types=events,
        secret=secret,
        created_at=NOW + timedelta(seconds=offset),
    )


def delivery(
    delivery_id: str = "del-1",
    tenant: str = "t1",
    subscription_id: str = "sub-1",
    status: DeliveryStatus = DeliveryStatus.PENDING,
    due: int = 0,
    attempts: int = 0,
    data: dict[str, Any] | None = None,
    event_type: WebhookEventType = COMPLETED,
) -> Delivery:
    """A delivery of a run.completed event (or ``event_type``), due ``due`` seconds after :data:`NOW`."""
    payload = WebhookEventPayload(
        event_id=f"evt-{delivery_id}",
        event_type=event_type,
        tenant_id=tenant,
        deployment_ref="dep",
        occurred_at=NOW,
        data={"run_id": "run-1", "output": {"x": [1, "é", None], "ok": True}}
        if data is None
        else data,
    )
    return Delivery(
        delivery_id=delivery_id,
        tenant_id=tenant,
        subscription_id=subscription_id,
        event_id=payload.event_id,
        event_type=payload.event_type,
        payload=payload,
        status=status,
        attempts=attempts,
        next_attempt_at=NOW + timedelta(seconds=due),
        created_at=NOW,
        updated_at=NOW,
    )


def attempt(
    delivery_id: str = "del-1",
    number: int = 1,
    status_code: int | None = None,
    error: str | None = None,
) -> DeliveryAttempt:
    """Attempt ``number`` of a delivery, made ``number`` seconds after :data:`NOW`."""
    return DeliveryAttempt(
        delivery_id=delivery_id,
        attempt=number,
        occurred_at=NOW + timedelta(seconds=number),
        status_code=status_code,
        error=error,
    )


def ids(items: Iterable[object], field: str = "delivery_id") -> list[str]:
    """The ``field`` of each item, in order."""
    return [getattr(item, field) for item in items]
