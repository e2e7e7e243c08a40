"""Billing use cases: receive a merchant event, start a checkout, hand off to the portal.

Only a signed, valid, newer merchant event changes a subscription; a checkout never does
(spec "Hosted flow"). Each call is one unit of work; the merchant is called outside it, so no
transaction waits on the network.
"""

from collections.abc import Callable, Mapping

import attrs

from ecp_core.billing.events import (
    EventOutcome,
    MerchantEvent,
    StoredMerchantEvent,
    WebhookReceipt,
)
from ecp_core.billing.model import (
    CheckoutRequest,
    HandOff,
    PlanName,
    Subscription,
    SubscriptionStatus,
)
from ecp_core.billing.rules import event_problems, is_stale, next_subscription
from ecp_core.errors import (
    AlreadySubscribed,
    Conflict,
    FieldError,
    NoMerchantCustomer,
    PlanNotPurchasable,
    WebhookRejected,
)
from ecp_core.identity import ActorIdentity
from ecp_core.ports.billing import BillingUnit, Merchant
from ecp_core.ports.system import Clock


@attrs.frozen(kw_only=True)
class BillingSetup:
    """What billing needs beyond storage: the merchant and the configured Solo price."""

    merchant: Merchant
    solo_price_id: str


def _holds_a_live_merchant_subscription(subscription: Subscription | None) -> bool:
    return (
        subscription is not None
        and subscription.merchant_subscription_id is not None
        and subscription.status is not SubscriptionStatus.CANCELED
    )


class BillingService:
    """Merchant events, checkout and the customer portal of one tenant's subscription."""

    def __init__(self, uow: Callable[[], BillingUnit], clock: Clock, setup: BillingSetup) -> None:
        """Wire the service."""
        self._uow = uow
        self._clock = clock
        self._merchant = setup.merchant
        self._solo_price_id = setup.solo_price_id

    def receive(self, headers: Mapping[str, str], body: bytes) -> WebhookReceipt:
        """Verify, check and record one merchant webhook; what it did.

        Raises WebhookRejected (bad signature, unknown price, missing tenant metadata, invalid
        period: nothing changes) and Conflict (an event id received before with other content).
        """
        event = self._merchant.event(headers, body, self._clock.now())
        if event is None:
            return WebhookReceipt(outcome=EventOutcome.IGNORED)
        problems = event_problems(event, self._solo_price_id)
        if problems:
            raise WebhookRejected(f"merchant event {event.event_id} is invalid", errors=problems)
        try:
            return self._record(event)
        except Conflict:
            # A concurrent delivery of the same event may have stored it first: look again,
            # which answers an exact retry as a duplicate and a changed one as a conflict.
            return self._record(event)

    def _record(self, event: MerchantEvent) -> WebhookReceipt:
        assert event.tenant_id is not None  # noqa: S101 - checked valid
        now = self._clock.now()
        with self._uow() as uow:
            known = uow.merchant_events.get(event.event_id)
            if known is not None:
                if known.digest != event.digest:
                    raise Conflict(
                        f"merchant event {event.event_id} was received before with other content"
                    )
                return WebhookReceipt(outcome=EventOutcome.DUPLICATE, event_id=event.event_id)
            current = uow.subscriptions.lock(event.tenant_id)
            stale = is_stale(current, event)
            if not stale:
                following = next_subscription(current, event, self._solo_price_id, now)
                if current is None:
                    uow.subscriptions.add(following)
                else:
                    uow.subscriptions.save(following)
            uow.merchant_events.add(
                StoredMerchantEvent(
                    event_id=event.event_id,
                    digest=event.digest,
                    tenant_id=event.tenant_id,
                    event_type=event.event_type,
                    merchant_subscription_id=event.merchant_subscription_id,
                    occurred_at=event.occurred_at,
                    applied=not stale,
                    received_at=now,
                )
            )
            uow.commit()
        outcome = EventOutcome.RETAINED if stale else EventOutcome.APPLIED
        return WebhookReceipt(outcome=outcome, event_id=event.event_id)

    def checkout(self, actor: ActorIdentity, request: CheckoutRequest) -> HandOff:
        """The merchant's checkout for the Solo plan, for the caller's tenant; nothing changes.

        Raises PlanNotPurchasable for any plan but ``solo`` and AlreadySubscribed while the
        tenant's merchant subscription lives on (ADR 0035).
        """
        if request.plan != PlanName.SOLO.value:
            raise PlanNotPurchasable(
                f"plan {request.plan!r} cannot be bought; only 'solo' can",
                errors=[FieldError(loc=("plan",), msg="only 'solo' can be bought")],
            )
        with self._uow() as uow:
            current = uow.subscriptions.get(actor.tenant_id)
        if _holds_a_live_merchant_subscription(current):
            raise AlreadySubscribed(
                "the tenant's subscription is with the merchant already; use the customer portal"
            )
        customer = None if current is None else current.merchant_customer_id
        url = self._merchant.checkout(actor.tenant_id, self._solo_price_id, customer)
        return HandOff(url=url)

    def portal(self, actor: ActorIdentity) -> HandOff:
        """A customer-portal session for the caller's tenant (NoMerchantCustomer before one)."""
        with self._uow() as uow:
            current = uow.subscriptions.get(actor.tenant_id)
        if current is None or current.merchant_customer_id is None:
            raise NoMerchantCustomer("the merchant knows no customer of this tenant yet")
        url = self._merchant.portal(current.merchant_customer_id, current.merchant_subscription_id)
        return HandOff(url=url)


__all__ = ["BillingService", "BillingSetup"]
