"""Use cases for webhooks: subscriptions, emitting events into the outbox, delivery, dead letters."""

import json
import logging
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import attrs

from ecp_core.catalog.service import require_deployment
from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.identity import DEFAULT_TENANT, ActorIdentity
from ecp_core.ports.system import Clock, HttpAnswer, HttpSender, IdFactory
from ecp_core.ports.webhooks import WebhooksUnit
from ecp_core.webhooks.health import DEFAULT_WINDOW, AuditDeliveryHealth
from ecp_core.webhooks.model import (
    CreateSubscriptionRequest,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    Subscription,
    SubscriptionCreated,
    SubscriptionView,
    WebhookEventPayload,
    WebhookEventType,
)
from ecp_core.webhooks.schedule import RetrySchedule, next_delay
from ecp_core.webhooks.signing import (
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    sign_body,
)
from ecp_core.wire import unstructure

log = logging.getLogger("ecp_core.webhooks")


def encode(payload: WebhookEventPayload) -> bytes:
    """The exact bytes sent and signed (compact JSON, keys in a stable order)."""
    return json.dumps(unstructure(payload), separators=(",", ":"), sort_keys=True).encode("utf-8")


class WebhookService:
    """Subscriptions, the outbox written in the caller's transaction, and delivery."""

    def __init__(
        self,
        uow: Callable[[], WebhooksUnit],
        clock: Clock,
        ids: IdFactory,
        policy: RetrySchedule,
        new_secret: Callable[[], str] = lambda: secrets.token_urlsafe(32),
    ) -> None:
        """Wire the service; ``policy`` sets attempts and backoff."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._policy = policy
        self._new_secret = new_secret

    # -- subscriptions -------------------------------------------------------------------------

    def subscribe(
        self, actor: ActorIdentity, request: CreateSubscriptionRequest
    ) -> SubscriptionCreated:
        """Subscribe the caller's tenant to a deployment's events; the secret is shown this once."""
        tenant_id = actor.tenant_id
        if request.tenant_id not in (tenant_id, DEFAULT_TENANT):
            raise ValidationFailed(
                "subscriptions belong to the caller's tenant",
                errors=[FieldError(loc=("tenant_id",), msg="must be the caller's tenant")],
            )
        with self._uow() as uow:
            require_deployment(uow, tenant_id, request.deployment_ref)
            subscription = Subscription(
                subscription_id=self._ids.new_id(),
                tenant_id=tenant_id,
                deployment_ref=request.deployment_ref,
                target_url=request.target_url,
                event_types=request.event_types,
                secret=request.secret or self._new_secret(),
                created_at=self._clock.now(),
            )
            uow.webhooks.add_subscription(subscription)
            uow.commit()
        return SubscriptionCreated(
            subscription=SubscriptionView.of(subscription), secret=subscription.secret
        )

    def subscriptions(self, tenant_id: str) -> list[SubscriptionView]:
        """The tenant's live subscriptions, secrets hidden."""
        with self._uow() as uow:
            return [SubscriptionView.of(s) for s in uow.webhooks.subscriptions(tenant_id)]

    def unsubscribe(self, tenant_id: str, subscription_id: str) -> None:
        """Stop a subscription; its deliveries and dead letters stay readable."""
        with self._uow() as uow:
            if not uow.webhooks.delete_subscription(tenant_id, subscription_id):
                raise NotFound(f"subscription {subscription_id} not found")
            uow.commit()

    # -- emitting ------------------------------------------------------------------------------

    def emit_in(
        self,
        uow: WebhooksUnit,
        event_type: WebhookEventType,
        deployment_ref: str,
        tenant_id: str,
        data: dict[str, Any],
    ) -> WebhookEventPayload:
        """Queue the event for every matching subscription inside the caller's transaction."""
        now = self._clock.now()
        payload = WebhookEventPayload(
            event_id=self._ids.new_id(),
            event_type=event_type,
            tenant_id=tenant_id,
            deployment_ref=deployment_ref,
            occurred_at=now,
            data=data,
        )
        for subscription in uow.webhooks.matching(tenant_id, deployment_ref, event_type):
            uow.webhooks.add_delivery(
                Delivery(
                    delivery_id=self._ids.new_id(),
                    tenant_id=tenant_id,
                    subscription_id=subscription.subscription_id,
                    event_id=payload.event_id,
                    event_type=event_type,
                    payload=payload,
                    status=DeliveryStatus.PENDING,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                    updated_at=now,
                )
            )
        return payload

    def emit(
        self,
        event_type: WebhookEventType,
        deployment_ref: str,
        tenant_id: str,
        data: dict[str, Any],
    ) -> WebhookEventPayload:
        """Emit an event of the application's own, in a transaction of its own."""
        with self._uow() as uow:
            payload = self.emit_in(uow, event_type, deployment_ref, tenant_id, data)
            uow.commit()
        return payload

    # -- delivery ------------------------------------------------------------------------------

    def deliver_due(self, sender: HttpSender, limit: int = 10) -> int:
        """Claim due deliveries and POST each once; return how many were attempted.

        The claim holds the rows until commit, so concurrent workers never send the same one at
        once; a worker killed mid-way leaves them pending, to be sent again (at least once).
        """
        with self._uow() as uow:
            due = uow.webhooks.claim_due(self._clock.now(), limit)
            for delivery in due:
                self._attempt(uow, sender, delivery)
            uow.commit()
        return len(due)

    def _attempt(self, uow: WebhooksUnit, sender: HttpSender, delivery: Delivery) -> None:
        subscription = uow.webhooks.subscription(delivery.tenant_id, delivery.subscription_id)
        number = delivery.attempts + 1
        if subscription is None:
            answer = HttpAnswer(error="the subscription was deleted")
        else:
            body = encode(delivery.payload)
            headers = {
                "Content-Type": "application/json",
                SIGNATURE_HEADER: sign_body(subscription.secret, body),
                EVENT_ID_HEADER: delivery.event_id,
                EVENT_TYPE_HEADER: str(delivery.event_type),
            }
            answer = sender.post(subscription.target_url, body, headers)
        now = self._clock.now()
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
        elif subscription is None or number >= self._policy.max_attempts:
            status, next_at = DeliveryStatus.DEAD, delivery.next_attempt_at
            log.warning("webhook dead letter", extra=facts)
        else:
            wait = next_delay(self._policy, number, retry_after=answer.retry_after)
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

    # -- dead letters --------------------------------------------------------------------------

    def dead_letters(
        self, tenant_id: str, *, limit: int = 50, before: str | None = None
    ) -> list[Delivery]:
        """The tenant's dead deliveries, newest first."""
        with self._uow() as uow:
            return uow.webhooks.dead_letters(tenant_id, limit=limit, before=before)

    def dead_letter(
        self, tenant_id: str, delivery_id: str
    ) -> tuple[Delivery, list[DeliveryAttempt]]:
        """One dead delivery and its attempts (status codes and errors)."""
        with self._uow() as uow:
            delivery = uow.webhooks.delivery(tenant_id, delivery_id)
            if delivery is None or delivery.status is not DeliveryStatus.DEAD:
                raise NotFound(f"dead letter {delivery_id} not found")
            return delivery, uow.webhooks.attempts(tenant_id, delivery_id)

    def replay(self, tenant_id: str, delivery_id: str) -> Delivery:
        """Queue a dead letter again with the same event id; replaying twice returns the same one."""
        replay_id = f"{delivery_id}.replay"
        with self._uow() as uow:
            existing = uow.webhooks.delivery(tenant_id, replay_id)
            if existing is not None:
                return existing
            dead = uow.webhooks.delivery(tenant_id, delivery_id)
            if dead is None or dead.status is not DeliveryStatus.DEAD:
                raise NotFound(f"dead letter {delivery_id} not found")
            now = self._clock.now()
            replay = attrs.evolve(
                dead,
                delivery_id=replay_id,
                status=DeliveryStatus.PENDING,
                attempts=0,
                next_attempt_at=now,
                created_at=now,
                updated_at=now,
                last_status_code=None,
                last_error=None,
                replay_of=delivery_id,
            )
            uow.webhooks.add_delivery(replay)
            uow.commit()
        return replay

    # -- delivery health -----------------------------------------------------------------------

    def delivery_health(self, tenant_id: str, since: datetime | None = None) -> AuditDeliveryHealth:
        """The tenant's outbox since ``since`` (default the last 24 hours) and its queue now."""
        now = self._clock.now()
        if since is not None and since > now:
            raise ValidationFailed(
                "the window cannot start in the future",
                errors=[FieldError(loc=("query", "since"), msg="must not be after now")],
            )
        with self._uow() as uow:
            counts = uow.webhooks.delivery_counts(tenant_id, since or now - DEFAULT_WINDOW)
        return AuditDeliveryHealth.of(counts)
