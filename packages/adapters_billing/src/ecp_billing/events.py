"""Paddle Billing's subscription event JSON, normalized to the core's :class:`MerchantEvent`.

Paddle sends ``{"event_id", "event_type", "occurred_at", "notification_id", "data": <the
subscription entity>}``; the entity carries ``id``, ``status``, ``customer_id``, ``items`` (each
with its ``price``), ``custom_data`` and ``current_billing_period`` (``{"starts_at",
"ends_at"}``, null once canceled or paused). Every line item's price is read, not only the first.

The digest covers the event's content without ``notification_id``: Paddle gives a replayed
notification a new one, and that replay is still an exact retry of the same event (ADR 0032).
"""

from datetime import datetime
from typing import Any

from ecp_core.billing.events import MerchantEvent, MerchantEventType
from ecp_core.billing.model import SubscriptionStatus
from ecp_core.canonical import json_digest
from ecp_core.errors import EcpError, FieldError, WebhookRejected
from ecp_core.json_text import parse_json_text
from ecp_core.wire import parse_timestamp

Loc = tuple[str | int, ...]

_SUBSCRIPTION_EVENTS = frozenset(kind.value for kind in MerchantEventType)


class _Unreadable(Exception):
    """One field of the payload that is missing or of the wrong shape."""

    def __init__(self, loc: Loc, msg: str) -> None:
        super().__init__(msg)
        self.error = FieldError(loc=loc, msg=msg)


def _text(value: Any, loc: Loc, *, optional: bool = False) -> str | None:  # noqa: ANN401 - JSON
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise _Unreadable(loc, "must be a non-empty string")
    return value


def _required_text(value: Any, loc: Loc) -> str:  # noqa: ANN401 - JSON
    text = _text(value, loc)
    assert text is not None  # noqa: S101 - not optional
    return text


def _object(value: Any, loc: Loc) -> dict[str, Any]:  # noqa: ANN401 - JSON
    if not isinstance(value, dict):
        raise _Unreadable(loc, "must be an object")
    return value


def _moment(value: Any, loc: Loc) -> datetime:  # noqa: ANN401 - JSON
    try:
        return parse_timestamp(_required_text(value, loc))
    except ValueError as exc:
        raise _Unreadable(loc, "must be an RFC 3339 time with an offset") from exc


def _price_ids(items: Any) -> tuple[str, ...]:  # noqa: ANN401 - JSON
    if not isinstance(items, list):
        raise _Unreadable(("data", "items"), "must be a list")
    found = []
    for index, item in enumerate(items):
        entry = _object(item, ("data", "items", index))
        price = entry.get("price")
        price_id = _object(price, ("data", "items", index, "price")).get("id") if price else None
        found.append(_required_text(price_id or entry.get("price_id"), ("data", "items", index)))
    return tuple(found)


def _period(value: Any) -> tuple[datetime | None, datetime | None]:  # noqa: ANN401 - JSON
    loc: Loc = ("data", "current_billing_period")
    if value is None:
        return None, None
    period = _object(value, loc)
    starts, ends = period.get("starts_at"), period.get("ends_at")
    return (
        None if starts is None else _moment(starts, (*loc, "starts_at")),
        None if ends is None else _moment(ends, (*loc, "ends_at")),
    )


def _tenant(custom_data: Any) -> str | None:  # noqa: ANN401 - JSON
    if not isinstance(custom_data, dict):
        return None
    tenant = custom_data.get("tenant_id")
    return tenant if isinstance(tenant, str) and tenant else None


def _status(value: Any) -> SubscriptionStatus:  # noqa: ANN401 - JSON
    try:
        return SubscriptionStatus(value)
    except ValueError as exc:
        raise _Unreadable(("data", "status"), "not a subscription status") from exc


def _event(payload: dict[str, Any], kind: MerchantEventType) -> MerchantEvent:
    data = _object(payload.get("data"), ("data",))
    start, end = _period(data.get("current_billing_period"))
    return MerchantEvent(
        event_id=_required_text(payload.get("event_id"), ("event_id",)),
        event_type=kind,
        occurred_at=_moment(payload.get("occurred_at"), ("occurred_at",)),
        tenant_id=_tenant(data.get("custom_data")),
        merchant_subscription_id=_required_text(data.get("id"), ("data", "id")),
        merchant_customer_id=_text(data.get("customer_id"), ("data", "customer_id"), optional=True),
        status=_status(data.get("status")),
        price_ids=_price_ids(data.get("items")),
        period_start=start,
        period_end=end,
        digest=json_digest({k: v for k, v in payload.items() if k != "notification_id"}),
    )


def _unreadable(errors: list[FieldError]) -> WebhookRejected:
    return WebhookRejected("the merchant event cannot be read", errors=errors)


def normalized(body: bytes) -> MerchantEvent | None:
    """The subscription event in a (verified) Paddle webhook body; None for other event types.

    WebhookRejected names the first field that is missing or malformed.
    """
    try:
        payload = _object(parse_json_text(body), ())
        kind_text = _required_text(payload.get("event_type"), ("event_type",))
    except EcpError as exc:  # not JSON, or not I-JSON
        raise _unreadable(list(exc.errors) or [FieldError(loc=(), msg=exc.detail)]) from exc
    except _Unreadable as exc:
        raise _unreadable([exc.error]) from exc
    if kind_text not in _SUBSCRIPTION_EVENTS:
        return None
    try:
        return _event(payload, MerchantEventType(kind_text))
    except _Unreadable as exc:
        raise _unreadable([exc.error]) from exc
    except (ValueError, TypeError) as exc:  # a model constraint (an id too long, say)
        raise _unreadable([FieldError(loc=(), msg=str(exc))]) from exc


__all__ = ["normalized"]
