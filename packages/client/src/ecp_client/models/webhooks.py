"""The API's webhooks models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "Delivery",
    "SecretRotated",
    "SubscriptionCreated",
    "SubscriptionListResponse",
    "SubscriptionView",
    "WebhookEventPayload",
]


@attrs.frozen(kw_only=True)
class WebhookEventPayload:
    """The JSON body every delivery carries; ``event_id`` is stable across retries."""

    data: dict[str, Any] = attrs.Factory(dict)
    """The event's details (such as the run's id); their keys depend on the event type."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    event_id: str
    """The event's id."""
    event_type: str
    """What happened."""
    occurred_at: datetime
    """When it happened (RFC 3339, UTC)."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class Delivery:
    """One event on its way to one subscription (the transactional outbox row)."""

    attempts: int
    """How many times it has been POSTed so far."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    delivery_id: str
    """The webhook delivery's id."""
    event_id: str
    """The event's id."""
    event_type: str
    """What happened."""
    last_error: str | None = None
    """Why the last attempt got no answer (a refused address, a network error); else null."""
    last_status_code: int | None = None
    """The HTTP status of the last answer; null before the first attempt or without an answer."""
    next_attempt_at: datetime
    """When a pending delivery is next POSTed (RFC 3339, UTC)."""
    payload: WebhookEventPayload
    """The body every attempt POSTs, the same on each."""
    replay_of: str | None = None
    """The id of the dead letter this delivery replays; null for a first delivery."""
    status: str
    """``pending`` until it is delivered (a 2xx answer) or runs out of attempts (``dead``)."""
    subscription_id: str
    """The webhook subscription's id."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""


@attrs.frozen(kw_only=True)
class SubscriptionView:
    """A subscription as listed: everything but the secret."""

    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    event_types: list[str]
    """The events delivered to it."""
    subscription_id: str
    """The webhook subscription's id."""
    target_url: str
    """The URL each delivery is POSTed to."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class SecretRotated:
    """The answer to a rotation: the new secret, this once, and when the old one stops signing."""

    previous_secret_expires_at: datetime
    """Until when the secret before it keeps signing beside it (24 hours from the rotation)."""
    secret: str = attrs.field(repr=False)
    """The new signing secret, in the ``whsec_`` form; shown this once."""
    subscription: SubscriptionView
    """The subscription (without secrets)."""


@attrs.frozen(kw_only=True)
class SubscriptionCreated:
    """The answer to a subscription: its view and, this once, the signing secret."""

    secret: str = attrs.field(repr=False)
    """The signing secret: the one given, or a ``whsec_`` one the server made; shown this once."""
    subscription: SubscriptionView
    """The subscription made (without its secret)."""


@attrs.frozen(kw_only=True)
class SubscriptionListResponse:
    """The tenant's live subscriptions (secrets are never shown again)."""

    subscriptions: list[SubscriptionView]
    """Every live subscription of the tenant."""
