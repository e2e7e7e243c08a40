"""Webhook subscriptions and event payloads."""

import enum
from datetime import datetime, timedelta
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Items, Text, checked

TARGET_URL = r"https?://[^\s]+"
ROTATION_OVERLAP = timedelta(hours=24)
"""How long a rotated-out secret keeps signing beside the new one."""


class WebhookEventType(enum.StrEnum):
    """Events a subscription can ask for."""

    RUN_STARTED = "run.started"
    RUN_WAITING_APPROVAL = "run.waiting_approval"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_TERMINATED_BY_POLICY = "run.terminated_by_policy"
    RUN_CANCELED = "run.canceled"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_RESOLVED = "approval.resolved"
    WEBHOOK_TEST = "webhook.test"
    """Sent to one subscription on request (``POST …/test``), whatever it subscribed to."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateSubscriptionRequest:
    """Body of ``POST /webhooks/subscriptions``; without ``secret`` the server makes one."""

    deployment_ref: Annotated[str, Text(1, 512)]
    target_url: Annotated[str, Text(1, 2048, pattern=TARGET_URL)]
    """The http(s) URL each delivery is POSTed to; a private or loopback one only if allowed."""
    event_types: Annotated[tuple[WebhookEventType, ...], Items(1, 5, unique=True)]
    """The events to deliver (one to five, no repeats)."""
    tenant_id: Annotated[str, Text(1, 512)] = "default"
    secret: Annotated[str, Text(16, 512)] | None = None
    """The signing secret, plain or ``whsec_<base64>``; left out, the server makes one."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class WebhookEventPayload:
    """The JSON body every delivery carries; ``event_id`` is stable across retries."""

    event_id: str
    event_type: WebhookEventType
    """What happened."""
    tenant_id: str
    deployment_ref: str
    occurred_at: Annotated[datetime, AwareUtc()]
    data: dict[str, Any] = attrs.field(factory=dict)
    """The event's details (such as the run's id); their keys depend on the event type."""


class DeliveryStatus(enum.StrEnum):
    """Where one delivery of one event to one subscription stands."""

    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"


@attrs.frozen(kw_only=True, field_transformer=checked)
class WebhookSubscription:
    """A stored webhook subscription; a secret never leaves the server after it is made.

    ``secret`` is the current one; after a rotation the one before it signs too, until
    ``previous_secret_expires_at``.
    """

    subscription_id: str
    tenant_id: str
    deployment_ref: str
    target_url: str
    event_types: tuple[WebhookEventType, ...]
    secret: str
    created_at: Annotated[datetime, AwareUtc()]
    previous_secret: str | None = None
    previous_secret_expires_at: Annotated[datetime, AwareUtc()] | None = None

    def signing_secrets(self, now: datetime) -> tuple[str, ...]:
        """The secrets that sign at ``now``: the current one, then the previous one if live."""
        expires = self.previous_secret_expires_at
        if self.previous_secret is None or expires is None or expires <= now:
            return (self.secret,)
        return (self.secret, self.previous_secret)


@attrs.frozen(kw_only=True, field_transformer=checked)
class SubscriptionView:
    """A subscription as listed: everything but the secret."""

    subscription_id: str
    tenant_id: str
    deployment_ref: str
    target_url: str
    """The URL each delivery is POSTed to."""
    event_types: tuple[WebhookEventType, ...]
    """The events delivered to it."""
    created_at: datetime

    @classmethod
    def of(cls, subscription: WebhookSubscription) -> "SubscriptionView":
        """Hide the secret."""
        return cls(
            subscription_id=subscription.subscription_id,
            tenant_id=subscription.tenant_id,
            deployment_ref=subscription.deployment_ref,
            target_url=subscription.target_url,
            event_types=subscription.event_types,
            created_at=subscription.created_at,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class SubscriptionCreated:
    """The answer to a subscription: its view and, this once, the signing secret."""

    subscription: SubscriptionView
    """The subscription made (without its secret)."""
    secret: str
    """The signing secret: the one given, or a ``whsec_`` one the server made; shown this once."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SecretRotated:
    """The answer to a rotation: the new secret, this once, and when the old one stops signing."""

    subscription: SubscriptionView
    """The subscription (without secrets)."""
    secret: str
    """The new signing secret, in the ``whsec_`` form; shown this once."""
    previous_secret_expires_at: datetime
    """Until when the secret before it keeps signing beside it (24 hours from the rotation)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Delivery:
    """One event on its way to one subscription (the transactional outbox row)."""

    delivery_id: str
    tenant_id: str
    subscription_id: str
    event_id: str
    event_type: WebhookEventType
    """What happened."""
    payload: WebhookEventPayload
    """The body every attempt POSTs, the same on each."""
    status: DeliveryStatus
    """``pending`` until it is delivered (a 2xx answer) or runs out of attempts (``dead``)."""
    attempts: int
    """How many times it has been POSTed so far."""
    next_attempt_at: Annotated[datetime, AwareUtc()]
    """When a pending delivery is next POSTed (RFC 3339, UTC)."""
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    last_status_code: int | None = None
    """The HTTP status of the last answer; null before the first attempt or without an answer."""
    last_error: str | None = None
    """Why the last attempt got no answer (a refused address, a network error); else null."""
    replay_of: str | None = None
    """The id of the dead letter this delivery replays; null for a first delivery."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeliveryAttempt:
    """One POST of a delivery and what came back."""

    delivery_id: str
    attempt: int
    """The attempt's number, counting from 1."""
    occurred_at: Annotated[datetime, AwareUtc()]
    status_code: int | None = None
    """The HTTP status the receiver answered; null when no answer came."""
    error: str | None = None
    """Why no answer came (a refused address, a network error); null when one did."""
