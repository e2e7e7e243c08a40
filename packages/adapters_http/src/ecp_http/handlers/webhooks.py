"""Webhook subscriptions and dead letters (CONTRACT.md "Webhooks")."""

from typing import TYPE_CHECKING

import attrs

from ecp_core.constraints import checked
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.pages import MAX_PAGE
from ecp_core.permissions import Permission
from ecp_core.webhooks.model import (
    CreateSubscriptionRequest,
    Delivery,
    DeliveryAttempt,
    SubscriptionCreated,
    SubscriptionView,
)
from ecp_http.handlers.common import int_query
from ecp_http.routing import Call, Operation, QueryParam, Reply
from ecp_http.webhook_sender import target_problem

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "webhooks"


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


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    webhooks = runtime.ecp.webhooks
    allow_private = runtime.settings.webhook_allow_private_targets

    def create_subscription(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        problem = target_problem(call.body.target_url, allow_private=allow_private)
        if problem is not None:
            raise ValidationFailed(
                "the target cannot receive webhooks",
                errors=[FieldError(loc=("target_url",), msg=problem)],
            )
        created = webhooks.subscribe(call.actor, call.body)
        return Reply(body=created, status=201, headers={"Cache-Control": "no-store"})

    def list_subscriptions(call: Call) -> SubscriptionListResponse:
        return SubscriptionListResponse(subscriptions=tuple(webhooks.subscriptions(call.tenant)))

    def delete_subscription(call: Call) -> Reply:
        webhooks.unsubscribe(call.tenant, call.path["subscription_id"])
        return Reply(body=None, status=204)

    def list_dead_letters(call: Call) -> DeadLetterListResponse:
        limit = int_query(call.query, "limit", 50, 1, MAX_PAGE)
        found = webhooks.dead_letters(call.tenant, limit=limit + 1, before=call.query.get("cursor"))
        more = len(found) > limit
        found = found[:limit]
        return DeadLetterListResponse(
            dead_letters=tuple(found), next_cursor=found[-1].delivery_id if more else None
        )

    def get_dead_letter(call: Call) -> DeadLetterResponse:
        delivery, attempts = webhooks.dead_letter(call.tenant, call.path["delivery_id"])
        return DeadLetterResponse(delivery=delivery, attempts=tuple(attempts))

    def replay_dead_letter(call: Call) -> Delivery:
        replay = webhooks.replay(call.tenant, call.path["delivery_id"])
        runtime.dispatcher.wake()
        return replay

    need = Permission.WEBHOOK_ADMIN
    return [
        Operation(
            method="POST",
            path="/webhooks/subscriptions",
            handler=create_subscription,
            tag=TAG,
            summary="Subscribe to a deployment's run events; the signing secret is shown once",
            permission=need,
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
            permission=need,
            response=SubscriptionListResponse,
        ),
        Operation(
            method="DELETE",
            path="/webhooks/subscriptions/{subscription_id}",
            handler=delete_subscription,
            tag=TAG,
            summary="Stop a subscription",
            permission=need,
            status=204,
        ),
        Operation(
            method="GET",
            path="/webhooks/dead-letters",
            handler=list_dead_letters,
            tag=TAG,
            summary="Deliveries that ran out of attempts",
            permission=need,
            response=DeadLetterListResponse,
            query=(
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
        ),
        Operation(
            method="GET",
            path="/webhooks/dead-letters/{delivery_id}",
            handler=get_dead_letter,
            tag=TAG,
            summary="A dead letter and its attempts",
            permission=need,
            response=DeadLetterResponse,
        ),
        Operation(
            method="POST",
            path="/webhooks/dead-letters/{delivery_id}/replay",
            handler=replay_dead_letter,
            tag=TAG,
            summary="Deliver a dead letter again (same event id); repeating returns the same replay",
            permission=need,
            response=Delivery,
        ),
    ]
