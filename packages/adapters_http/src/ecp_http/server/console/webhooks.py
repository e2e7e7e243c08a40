"""Webhooks: endpoints and their health, deliveries, dead letters and Replay (ADR 0084).

``/console/webhooks`` needs ``webhook_admin``, the permission of the API's webhook routes. It
shows the tenant's subscriptions (never a secret: ``SubscriptionView`` has none) with the last 24
hours of their deliveries by status, the newest dead letters with a Replay form, and a keyset page
of deliveries filtered by status. Four reads, one statement each, whatever the rows. Replay posts
a CSRF form to the same core service as ``POST /webhooks/dead-letters/{id}/replay`` and wakes the
delivery sweep as the API does. Payloads are not shown: the event type and its run are.
"""

from typing import Any
from urllib.parse import quote

from starlette.responses import Response

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.webhooks.health import EndpointHealth
from ecp_core.webhooks.model import Delivery, DeliveryStatus, SubscriptionView
from ecp_http.server.console.browser import Visit, redirect, signed_in
from ecp_http.server.console.views import when
from ecp_http.wire.models import ConsoleWebhooksQuery

DELIVERIES_PAGE = 25
"""Deliveries per page."""
DEAD_SHOWN = 10
"""Dead letters shown above the deliveries (the status filter lists them all)."""
ERROR_SHOWN = 160
"""How much of a delivery's last error a row shows."""
_KINDS = {
    DeliveryStatus.PENDING: "wait",
    DeliveryStatus.DELIVERED: "ok",
    DeliveryStatus.DEAD: "bad",
}


def delivery_status(text: str | None) -> DeliveryStatus | None:
    """The status a filter names (empty: none); ValidationFailed for one that is not a status."""
    if not text:
        return None
    try:
        return DeliveryStatus(text)
    except ValueError as exc:
        msg = f"one of: {', '.join(status.value for status in DeliveryStatus)}"
        raise ValidationFailed(
            "no such delivery status", errors=[FieldError(loc=("query", "status"), msg=msg)]
        ) from exc


def _health(health: EndpointHealth) -> tuple[str, str]:
    """An endpoint's state in a word, and its badge: by its last answer, then its losses.

    ``idle`` (nothing in the window), ``failing`` (the last attempt got no 2xx), ``recovered``
    (it answers 2xx again, but deliveries died in the window), ``healthy``.
    """
    code = health.last_status_code
    if not (health.pending or health.delivered or health.dead):
        return "idle", "muted"
    if health.last_attempt_at is not None and not (code is not None and 200 <= code < 300):  # noqa: PLR2004
        return "failing", "bad"
    if health.dead:
        return "recovered", "warn"
    return "healthy", "ok"


def endpoint_row(subscription: SubscriptionView, health: EndpointHealth | None) -> dict[str, Any]:
    """One subscription as the page lists it: where it posts, what, and how that went lately."""
    health = health or EndpointHealth(subscription_id=subscription.subscription_id)
    state, kind = _health(health)
    return {
        "subscription_id": subscription.subscription_id,
        "target_url": subscription.target_url,
        "deployment_ref": subscription.deployment_ref,
        "events": ", ".join(event.value for event in subscription.event_types),
        "delivered": health.delivered,
        "pending": health.pending,
        "dead": health.dead,
        "state": state,
        "kind": kind,
        "last_status": health.last_status_code,
        "last_at": when(health.last_attempt_at) if health.last_attempt_at else "",
    }


def delivery_row(delivery: Delivery, targets: dict[str, str]) -> dict[str, Any]:
    """One delivery as the page lists it (its event, not its payload)."""
    error = delivery.last_error or ""
    run_id = delivery.payload.data.get("run_id")
    return {
        "delivery_id": delivery.delivery_id,
        "status": delivery.status.value,
        "kind": _KINDS[delivery.status],
        "event": delivery.event_type.value,
        "run_id": run_id if isinstance(run_id, str) else "",
        "target": targets.get(delivery.subscription_id, "a deleted subscription"),
        "attempts": delivery.attempts,
        "last_status": delivery.last_status_code,
        "error": error if len(error) <= ERROR_SHOWN else error[:ERROR_SHOWN] + "…",
        "next_attempt": when(delivery.next_attempt_at)
        if delivery.status is DeliveryStatus.PENDING
        else "",
        "updated_at": when(delivery.updated_at),
        "replay_of": delivery.replay_of or "",
    }


def _webhooks(visit: Visit) -> Response:
    """Endpoints with their health, the newest dead letters, and a page of deliveries."""
    visit.actor(Permission.WEBHOOK_ADMIN)
    query: ConsoleWebhooksQuery = visit.call.params or ConsoleWebhooksQuery()
    status = delivery_status(query.status)
    hooks, tenant = visit.services.ecp.webhooks, visit.session.tenant_id
    subscriptions = hooks.subscriptions(tenant)
    health = hooks.endpoint_health(tenant)
    dead = hooks.dead_letters(tenant, limit=DEAD_SHOWN)
    found, cursor = hooks.deliveries(
        tenant, limit=DELIVERIES_PAGE, cursor=query.cursor or None, status=status
    )
    targets = {s.subscription_id: s.target_url for s in subscriptions}
    return visit.page(
        "console_webhooks.html",
        section="webhooks",
        endpoints=[endpoint_row(s, health.get(s.subscription_id)) for s in subscriptions],
        dead=[
            {**delivery_row(d, targets), "csrf": visit.csrf(f"replay:{d.delivery_id}")}
            for d in dead
        ],
        rows=[delivery_row(d, targets) for d in found],
        chosen=query.status or "",
        statuses=[s.value for s in DeliveryStatus],
        next_cursor=cursor,
        first_page=bool(query.cursor),
        replayed=query.replayed or "",
    )


def _replay(visit: Visit) -> Response:
    """Replay a dead letter (its CSRF form), as the API's replay route does; back to the page."""
    delivery_id = visit.call.path["delivery_id"]
    visit.check_form(f"replay:{delivery_id}")
    actor = visit.actor(Permission.WEBHOOK_ADMIN)
    replay = visit.services.ecp.webhooks.replay(actor.tenant_id, delivery_id)
    visit.services.background.wake()
    return redirect(f"/console/webhooks?replayed={quote(replay.replay_of or delivery_id)}")


webhooks = signed_in(_webhooks)
replay = signed_in(_replay)

__all__ = [
    "DELIVERIES_PAGE",
    "delivery_row",
    "delivery_status",
    "endpoint_row",
    "replay",
    "webhooks",
]
