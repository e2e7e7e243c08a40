"""Use cases for webhooks: subscriptions, emitting events into the outbox, delivery, dead letters."""

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import attrs

from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.identity import DEFAULT_TENANT, ActorIdentity
from ecp_core.pages import check_limit, decode_cursor, next_page
from ecp_core.ports.system import Clock, HttpSender, IdFactory
from ecp_core.ports.webhooks import WebhooksUnit
from ecp_core.registry.service import require_deployment
from ecp_core.webhooks.delivery import attempt_delivery
from ecp_core.webhooks.health import DEFAULT_WINDOW, AuditDeliveryHealth, EndpointHealth
from ecp_core.webhooks.model import (
    ROTATION_OVERLAP,
    CreateSubscriptionRequest,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    SecretRotated,
    SubscriptionCreated,
    SubscriptionView,
    WebhookEventPayload,
    WebhookEventType,
    WebhookSubscription,
)
from ecp_core.webhooks.schedule import RetrySchedule
from ecp_core.webhooks.signing import new_secret, secret_problem

log = logging.getLogger("ecp_core.webhooks")

DELIVERIES_CURSOR = "webhook-deliveries"


class WebhookService:
    """Subscriptions, the outbox written in the caller's transaction, and delivery."""

    def __init__(
        self,
        uow: Callable[[], WebhooksUnit],
        clock: Clock,
        ids: IdFactory,
        policy: RetrySchedule,
        new_secret: Callable[[], str] = new_secret,
    ) -> None:
        """Wire the service; ``policy`` sets attempts and backoff; ``new_secret`` makes secrets."""
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
        problem = None if request.secret is None else secret_problem(request.secret)
        if problem is not None:
            raise ValidationFailed(
                "the secret cannot sign", errors=[FieldError(loc=("secret",), msg=problem)]
            )
        with self._uow() as uow:
            require_deployment(uow, tenant_id, request.deployment_ref)
            subscription = WebhookSubscription(
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

    def rotate_secret(self, tenant_id: str, subscription_id: str) -> SecretRotated:
        """Make a new secret, shown this once; the current one keeps signing for 24 hours.

        A rotation during the overlap drops the oldest secret: at most two sign (ADR 0054).
        """
        secret = self._new_secret()
        expires_at = self._clock.now() + ROTATION_OVERLAP
        with self._uow() as uow:
            rotated = uow.webhooks.rotate_secret(tenant_id, subscription_id, secret, expires_at)
            if rotated is None:
                raise NotFound(f"subscription {subscription_id} not found")
            uow.commit()
        return SecretRotated(
            subscription=SubscriptionView.of(rotated),
            secret=secret,
            previous_secret_expires_at=expires_at,
        )

    def drop_expired_secrets(self) -> int:
        """Forget the previous secrets whose overlap has ended; return how many."""
        with self._uow() as uow:
            dropped = uow.webhooks.drop_expired_secrets(self._clock.now())
            uow.commit()
        if dropped:
            log.info("webhook secrets expired", extra={"count": dropped})
        return dropped

    def send_test(self, tenant_id: str, subscription_id: str) -> Delivery:
        """Queue a ``webhook.test`` event for one subscription, due now, through the outbox."""
        with self._uow() as uow:
            subscription = uow.webhooks.subscription(tenant_id, subscription_id)
            if subscription is None:
                raise NotFound(f"subscription {subscription_id} not found")
            payload = self._payload(
                WebhookEventType.WEBHOOK_TEST,
                subscription.deployment_ref,
                tenant_id,
                {"subscription_id": subscription_id},
            )
            delivery = self._queue(uow, subscription, payload)
            uow.commit()
        return delivery

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
        payload = self._payload(event_type, deployment_ref, tenant_id, data)
        for subscription in uow.webhooks.matching(tenant_id, deployment_ref, event_type):
            self._queue(uow, subscription, payload)
        return payload

    def _payload(
        self,
        event_type: WebhookEventType,
        deployment_ref: str,
        tenant_id: str,
        data: dict[str, Any],
    ) -> WebhookEventPayload:
        return WebhookEventPayload(
            event_id=self._ids.new_id(),
            event_type=event_type,
            tenant_id=tenant_id,
            deployment_ref=deployment_ref,
            occurred_at=self._clock.now(),
            data=data,
        )

    def _queue(
        self, uow: WebhooksUnit, subscription: WebhookSubscription, payload: WebhookEventPayload
    ) -> Delivery:
        now = payload.occurred_at
        delivery = Delivery(
            delivery_id=self._ids.new_id(),
            tenant_id=payload.tenant_id,
            subscription_id=subscription.subscription_id,
            event_id=payload.event_id,
            event_type=payload.event_type,
            payload=payload,
            status=DeliveryStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
            updated_at=now,
        )
        uow.webhooks.add_delivery(delivery)
        return delivery

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
                attempt_delivery(uow, sender, delivery, clock=self._clock, policy=self._policy)
            uow.commit()
        return len(due)

    def seconds_to_next_due(self) -> float | None:
        """Seconds until the earliest pending delivery is due (0 if it is); None when none waits."""
        with self._uow() as uow:
            due = uow.webhooks.next_due()
        if due is None:
            return None
        return max(0.0, (due - self._clock.now()).total_seconds())

    # -- dead letters --------------------------------------------------------------------------

    def dead_letters(
        self, tenant_id: str, *, limit: int = 50, before: str | None = None
    ) -> list[Delivery]:
        """The tenant's dead deliveries, newest first."""
        with self._uow() as uow:
            return uow.webhooks.dead_letters(tenant_id, limit=limit, before=before)

    def deliveries(
        self,
        tenant_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        status: DeliveryStatus | None = None,
    ) -> tuple[list[Delivery], str | None]:
        """A page of the tenant's deliveries, newest first, of one status when given."""
        check_limit(limit)
        before = None if cursor is None else decode_cursor(DELIVERIES_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            found = uow.webhooks.deliveries(
                tenant_id, limit=limit + 1, before=before, status=status
            )
        return next_page(found, limit, DELIVERIES_CURSOR, lambda d: (d.delivery_id,))

    def endpoint_health(self, tenant_id: str) -> dict[str, EndpointHealth]:
        """Each subscription's deliveries of the last 24 hours by status, and its last answer."""
        since = self._clock.now() - DEFAULT_WINDOW
        with self._uow() as uow:
            found = uow.webhooks.endpoint_health(tenant_id, since)
        return {health.subscription_id: health for health in found}

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
