"""Audit delivery health: what the webhook outbox delivered, retried and lost (ADR 0042).

Counters cover a window (``since`` up to now); ``queue_depth`` is what is pending now. Only
``delivered`` means an event is durable at its receiver; ``rejected``, ``failed`` and
``abandoned`` are loss counters, and ``losing_events`` is true when any of them is non-zero.
"""

import enum
from datetime import datetime, timedelta

import attrs

from ecp_core.constraints import checked

DEFAULT_WINDOW = timedelta(hours=24)
"""The window counted when the caller names no ``since``."""

_TRANSIENT_CLIENT_ERRORS = frozenset({408, 429})
"""4xx answers that say "later", not "never" (Request Timeout, Too Many Requests)."""


class AttemptOutcome(enum.StrEnum):
    """How one POST of a delivery ended."""

    DELIVERED = "delivered"
    """The receiver answered 2xx: the event is durable there."""
    REJECTED = "rejected"
    """The receiver answered a 4xx other than 408 and 429: it refused the event."""
    FAILED = "failed"
    """Anything else: 3xx, 5xx, 408, 429, a timeout, a refused or broken connection."""


def attempt_outcome(status_code: int | None) -> AttemptOutcome:
    """Classify an attempt by the receiver's status (None: no answer at all).

    Its SQL twin is the ``CASE`` in ``ecp_postgres.webhooks``; the webhook conformance suite
    holds the two equal.
    """
    if status_code is not None and 200 <= status_code < 300:  # noqa: PLR2004
        return AttemptOutcome.DELIVERED
    if (
        status_code is not None
        and 400 <= status_code < 500  # noqa: PLR2004
        and status_code not in _TRANSIENT_CLIENT_ERRORS
    ):
        return AttemptOutcome.REJECTED
    return AttemptOutcome.FAILED


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeliveryCounts:
    """A tenant's outbox figures: pending now, and what happened within the window.

    ``delivered``, ``rejected`` and ``failed`` count attempts made in the window (together they
    are every attempt); ``retried`` the attempts after a delivery's first; ``queued`` the
    deliveries enqueued (replays included); ``abandoned`` the deliveries dead-lettered.
    """

    queue_depth: int = 0
    queued: int = 0
    delivered: int = 0
    retried: int = 0
    rejected: int = 0
    failed: int = 0
    abandoned: int = 0


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditDeliveryHealth:
    """``GET /v1/audit/delivery-health``: the counters and whether events are being lost."""

    queue_depth: int
    """Deliveries pending now."""
    queued: int
    """Deliveries enqueued within the window, replays included."""
    delivered: int
    """Attempts within the window the receiver accepted."""
    retried: int
    """Attempts within the window after a delivery's first."""
    rejected: int
    """Attempts within the window the receiver refused (a lasting 4xx)."""
    failed: int
    """Attempts within the window that failed (no answer, 5xx, a transient 4xx)."""
    abandoned: int
    """Deliveries dead-lettered within the window."""
    losing_events: bool
    """Whether any attempt was rejected or failed, or any delivery dead-lettered."""

    @classmethod
    def of(cls, counts: DeliveryCounts) -> "AuditDeliveryHealth":
        """The health the counts show: losing events when any loss counter is non-zero."""
        return cls(
            **attrs.asdict(counts),
            losing_events=counts.rejected + counts.failed + counts.abandoned > 0,
        )


@attrs.frozen(kw_only=True)
class EndpointHealth:
    """One subscription's deliveries queued within a window, by where they stand now.

    ``last_status_code`` is the answer to the latest attempt of those deliveries (None before
    any attempt or when that attempt got no answer); ``last_attempt_at`` is when it was made.
    """

    subscription_id: str
    pending: int = 0
    delivered: int = 0
    dead: int = 0
    last_status_code: int | None = None
    last_attempt_at: datetime | None = None


__all__ = [
    "DEFAULT_WINDOW",
    "AttemptOutcome",
    "AuditDeliveryHealth",
    "DeliveryCounts",
    "EndpointHealth",
    "attempt_outcome",
]
