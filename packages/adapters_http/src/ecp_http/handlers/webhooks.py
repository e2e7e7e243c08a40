"""Webhook subscriptions and dead letters (CONTRACT.md "Webhooks")."""

import attrs

from ecp_core.constraints import checked
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.webhooks.model import (
    CreateSubscriptionRequest,
    Delivery,
    DeliveryAttempt,
    SubscriptionCreated,
    SubscriptionView,
)
from ecp_http.models import PageQuery
from ecp_http.routing import Call, Operation, Reply
from ecp_http.services import Services
from ecp_http.webhook_sender import target_problem

TAG = "webhooks"
NEED = Permission.WEBHOOK_ADMIN


@attrs.frozen(kw_only=True, field_transformer=checked)
class SubscriptionListResponse:
    """The tenant's live subscriptions (secrets are never shown again)."""

    subscriptions: tuple[SubscriptionView, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeadLetterListResponse:
    """A page of dead deliveries, newest first."""

    dead_letters: tuple[Delivery, ...]
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeadLetterResponse:
    """One dead delivery and every attempt with its status code and error."""

    delivery: Delivery
    attempts: tuple[DeliveryAttempt, ...]


def create_subscription(call: Call, services: Services) -> Reply:
    """Subscribe a target that may receive webhooks; the signing secret is in this answer only."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    allow_private = services.settings.webhook_allow_private_targets
    problem = target_problem(call.body.target_url, allow_private=allow_private)
    if problem is not None:
        raise ValidationFailed(
            "the target cannot receive webhooks",
            errors=[FieldError(loc=("target_url",), msg=problem)],
        )
    created = services.ecp.webhooks.subscribe(call.actor, call.body)
    return Reply(body=created, status=201, headers={"Cache-Control": "no-store"})


def list_subscriptions(call: Call, services: Services) -> SubscriptionListResponse:
    """The tenant's live subscriptions."""
    found = services.ecp.webhooks.subscriptions(call.tenant)
    return SubscriptionListResponse(subscriptions=tuple(found))


def delete_subscription(call: Call, services: Services) -> Reply:
    """Stop a subscription."""
    services.ecp.webhooks.unsubscribe(call.tenant, call.path["subscription_id"])
    return Reply(body=None, status=204)


def list_dead_letters(call: Call, services: Services) -> DeadLetterListResponse:
    """A page of dead deliveries, newest first."""
    query: PageQuery = call.params
    found = services.ecp.webhooks.dead_letters(
        call.tenant, limit=query.limit + 1, before=query.cursor
    )
    more = len(found) > query.limit
    found = found[: query.limit]
    return DeadLetterListResponse(
        dead_letters=tuple(found), next_cursor=found[-1].delivery_id if more else None
    )


def get_dead_letter(call: Call, services: Services) -> DeadLetterResponse:
    """A dead letter and its attempts."""
    delivery, attempts = services.ecp.webhooks.dead_letter(call.tenant, call.path["delivery_id"])
    return DeadLetterResponse(delivery=delivery, attempts=tuple(attempts))


def replay_dead_letter(call: Call, services: Services) -> Delivery:
    """Deliver a dead letter again."""
    replay = services.ecp.webhooks.replay(call.tenant, call.path["delivery_id"])
    services.background.wake()
    return replay


OPERATIONS = [
    Operation(
        method="POST",
        path="/webhooks/subscriptions",
        handler=create_subscription,
        tag=TAG,
        summary="Subscribe to a deployment's run events; the signing secret is shown once",
        permission=NEED,
        body=CreateSubscriptionRequest,
        response=SubscriptionCreated,
        status=201,
    ),
    Operation(
        method="GET",
        path="/webhooks/subscriptions",
        handler=list_subscriptions,
        tag=TAG,
        summary="The tenant's subscriptions",
        permission=NEED,
        response=SubscriptionListResponse,
    ),
    Operation(
        method="DELETE",
        path="/webhooks/subscriptions/{subscription_id}",
        handler=delete_subscription,
        tag=TAG,
        summary="Stop a subscription",
        permission=NEED,
        status=204,
    ),
    Operation(
        method="GET",
        path="/webhooks/dead-letters",
        handler=list_dead_letters,
        tag=TAG,
        summary="Deliveries that ran out of attempts",
        permission=NEED,
        response=DeadLetterListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/webhooks/dead-letters/{delivery_id}",
        handler=get_dead_letter,
        tag=TAG,
        summary="A dead letter and its attempts",
        permission=NEED,
        response=DeadLetterResponse,
    ),
    Operation(
        method="POST",
        path="/webhooks/dead-letters/{delivery_id}/replay",
        handler=replay_dead_letter,
        tag=TAG,
        summary="Deliver a dead letter again (same event id); repeating returns the same replay",
        permission=NEED,
        response=Delivery,
    ),
]
