"""Webhook subscriptions and dead letters."""

import attrs

from ecp_core.constraints import checked
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.webhooks.model import (
    CreateSubscriptionRequest,
    Delivery,
    DeliveryAttempt,
    SecretRotated,
    SubscriptionCreated,
    SubscriptionView,
)
from ecp_http.outbound.webhook_sender import target_problem
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import PageQuery

TAG = "webhooks"
NEED = Permission.WEBHOOK_ADMIN


@attrs.frozen(kw_only=True, field_transformer=checked)
class SubscriptionListResponse:
    """The tenant's live subscriptions (secrets are never shown again)."""

    subscriptions: tuple[SubscriptionView, ...]
    """Every live subscription of the tenant."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeadLetterListResponse:
    """A page of dead deliveries, newest first."""

    dead_letters: tuple[Delivery, ...]
    """The dead deliveries of this page, newest first."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeadLetterResponse:
    """One dead delivery and every attempt with its status code and error."""

    delivery: Delivery
    """The dead delivery."""
    attempts: tuple[DeliveryAttempt, ...]
    """Every attempt made, first to last."""


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


def rotate_secret(call: Call, services: Services) -> Reply:
    """A new secret, shown this once; the old one keeps signing beside it for 24 hours."""
    rotated = services.ecp.webhooks.rotate_secret(call.tenant, call.path["subscription_id"])
    return Reply(body=rotated, status=200, headers={"Cache-Control": "no-store"})


def send_test_event(call: Call, services: Services) -> Reply:
    """Queue a ``webhook.test`` event for the subscription, due now: the next sweep sends it."""
    delivery = services.ecp.webhooks.send_test(call.tenant, call.path["subscription_id"])
    return Reply(body=delivery, status=202)


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
        operation_id="webhooks_create_subscription",
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
        operation_id="webhooks_list_subscriptions",
        tag=TAG,
        summary="The tenant's subscriptions",
        permission=NEED,
        response=SubscriptionListResponse,
    ),
    Operation(
        method="DELETE",
        path="/webhooks/subscriptions/{subscription_id}",
        handler=delete_subscription,
        operation_id="webhooks_delete_subscription",
        tag=TAG,
        summary="Stop a subscription",
        permission=NEED,
        status=204,
    ),
    Operation(
        method="POST",
        path="/webhooks/subscriptions/{subscription_id}/rotate-secret",
        handler=rotate_secret,
        operation_id="webhooks_rotate_secret",
        tag=TAG,
        summary="A new signing secret, shown once; the old one keeps signing for 24 hours",
        permission=NEED,
        response=SecretRotated,
    ),
    Operation(
        method="POST",
        path="/webhooks/subscriptions/{subscription_id}/test",
        handler=send_test_event,
        operation_id="webhooks_send_test_event",
        tag=TAG,
        summary="Send a webhook.test event to the subscription now (through the outbox)",
        permission=NEED,
        response=Delivery,
        status=202,
    ),
    Operation(
        method="GET",
        path="/webhooks/dead-letters",
        handler=list_dead_letters,
        operation_id="webhooks_list_dead_letters",
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
        operation_id="webhooks_get_dead_letter",
        tag=TAG,
        summary="A dead letter and its attempts",
        permission=NEED,
        response=DeadLetterResponse,
    ),
    Operation(
        method="POST",
        path="/webhooks/dead-letters/{delivery_id}/replay",
        handler=replay_dead_letter,
        operation_id="webhooks_replay_dead_letter",
        tag=TAG,
        summary="Deliver a dead letter again (same event id); repeating returns the same replay",
        permission=NEED,
        response=Delivery,
    ),
]
