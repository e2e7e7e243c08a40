"""Merchant events through the billing service in memory: every rule of "Inbound events".

Each event is Paddle JSON signed as Paddle signs it, so verification and normalization are on
the path; the stored subscription and the event memory are read back from the store.
"""

from datetime import timedelta

import pytest
from tests.support.billing import MONTH, SOLO, T0, billing, body_of, payload

from ecp_core.billing.events import EventOutcome
from ecp_core.billing.model import (
    CheckoutRequest,
    PlanName,
    SubscriptionStatus,
    trial_subscription,
)
from ecp_core.errors import (
    Conflict,
    NoMerchantCustomer,
    PlanNotPurchasable,
    WebhookRejected,
)
from ecp_core.identity import ActorIdentity
from ecp_core.types import AuthMethod, ServiceRole

pytestmark = pytest.mark.unit

ADMIN = ActorIdentity(
    subject="a", auth_method=AuthMethod.BEARER, tenant_id="acme", roles=(ServiceRole.ADMIN,)
)


def with_trial():
    found = billing()
    with found.store.unit_of_work() as uow:
        uow.subscriptions.add(trial_subscription("acme", T0 - timedelta(days=1)))
        uow.commit()
    return found


@pytest.mark.spec("§3.6 subscription-transitions")
def test_a_signed_activation_moves_the_trial_to_active_solo():
    found = with_trial()
    receipt = found.deliver(payload())
    assert (receipt.outcome, receipt.event_id) == (EventOutcome.APPLIED, "evt_1")
    subscription = found.subscription()
    assert (subscription.plan, subscription.status) == (PlanName.SOLO, SubscriptionStatus.ACTIVE)
    assert (subscription.period_start, subscription.period_end) == (T0, T0 + MONTH)
    assert (subscription.merchant_subscription_id, subscription.merchant_customer_id) == (
        "sub_1",
        "ctm_1",
    )
    assert (subscription.last_event_id, subscription.last_event_at) == ("evt_1", T0)
    assert subscription.created_at == T0 - timedelta(days=1)


@pytest.mark.spec("§3.6 subscription-transitions")
def test_a_signed_cancel_with_a_null_period_is_valid_and_keeps_the_last_period():
    found = with_trial()
    found.deliver(payload())
    later = T0 + timedelta(days=3)
    cancel = payload("subscription.canceled", event_id="evt_2", status="canceled", at=later)
    cancel["data"]["current_billing_period"] = None
    assert found.deliver(cancel).outcome is EventOutcome.APPLIED
    subscription = found.subscription()
    assert subscription.status is SubscriptionStatus.CANCELED
    assert (subscription.period_start, subscription.period_end) == (T0, T0 + MONTH)


@pytest.mark.spec("§3.6 subscription-transitions")
def test_an_event_for_a_tenant_without_a_subscription_creates_it():
    found = billing()
    found.deliver(payload(status="trialing", event_type="subscription.trialing"))
    subscription = found.subscription()
    assert (subscription.plan, subscription.status) == (PlanName.SOLO, SubscriptionStatus.TRIALING)
    assert subscription.created_at == T0


@pytest.mark.spec("§3.6 subscription-transitions", "§6.3 merchant-events", "C12 paddle-webhooks")
@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"prices": ("pri_team",)}, ["data", "items"]),
        ({"prices": ()}, ["data", "items"]),
        ({"tenant": None}, ["data", "custom_data", "tenant_id"]),
        ({"period": None}, ["data", "current_billing_period"]),
        ({"period": (T0, T0)}, ["data", "current_billing_period"]),
        ({"period": (T0, T0 - timedelta(seconds=1))}, ["data", "current_billing_period"]),
    ],
)
def test_an_invalid_event_is_rejected_and_changes_nothing(change, loc):
    found = with_trial()
    before = found.subscription()
    with pytest.raises(WebhookRejected) as rejected:
        found.deliver(payload(**change))
    assert [list(error.loc) for error in rejected.value.errors] == [loc]
    assert found.subscription() == before
    with found.store.unit_of_work() as uow:
        assert uow.merchant_events.get("evt_1") is None


def test_a_period_with_one_end_only_is_rejected():
    found = with_trial()
    event = payload()
    event["data"]["current_billing_period"]["ends_at"] = None
    with pytest.raises(WebhookRejected):
        found.deliver(event)


@pytest.mark.spec("§6.3 merchant-events")
def test_the_solo_price_counts_on_any_line_item_not_only_the_first():
    found = with_trial()
    assert found.deliver(payload(prices=("pri_addon", SOLO))).outcome is EventOutcome.APPLIED
    assert found.subscription().price_id == SOLO


@pytest.mark.spec("§6.3 merchant-events")
def test_an_exact_retry_is_a_duplicate_and_a_changed_replay_a_conflict():
    found = with_trial()
    event = payload()
    found.deliver(event)
    applied = found.subscription()
    assert found.deliver(event).outcome is EventOutcome.DUPLICATE
    retried = {**event, "notification_id": "ntf_other"}  # Paddle's replay of a notification
    assert found.deliver(retried).outcome is EventOutcome.DUPLICATE
    changed = payload(status="past_due")
    with pytest.raises(Conflict):
        found.deliver(changed)
    assert found.subscription() == applied


@pytest.mark.spec("§3.6 subscription-transitions", "§6.3 merchant-events")
def test_an_older_or_equal_time_event_is_retained_not_applied_first_wins():
    found = with_trial()
    found.deliver(payload())
    applied = found.subscription()
    older = payload(
        "subscription.canceled",
        event_id="evt_0",
        status="canceled",
        at=T0 - timedelta(seconds=1),
        period=None,
    )
    same_time = payload("subscription.paused", event_id="evt_2", status="paused", period=None)
    assert found.deliver(older).outcome is EventOutcome.RETAINED
    assert found.deliver(same_time).outcome is EventOutcome.RETAINED
    assert found.subscription() == applied
    with found.store.unit_of_work() as uow:
        kept = uow.merchant_events.get("evt_2")
    assert (kept.applied, kept.tenant_id) == (False, "acme")
    assert found.deliver(same_time).outcome is EventOutcome.DUPLICATE


def test_a_signed_event_of_another_kind_is_ignored():
    found = with_trial()
    before = found.subscription()
    receipt = found.deliver(body_of({"event_id": "evt_9", "event_type": "transaction.completed"}))
    assert (receipt.outcome, receipt.event_id) == (EventOutcome.IGNORED, None)
    assert found.subscription() == before


@pytest.mark.spec("§5 merchant-signature")
def test_a_wrongly_signed_event_changes_nothing():
    found = with_trial()
    before = found.subscription()
    with pytest.raises(WebhookRejected):
        found.deliver(payload(), secret="another-secret")
    assert found.subscription() == before


@pytest.mark.spec("§4.5 checkout-solo-only")
@pytest.mark.parametrize("plan", ["team", "scale", "trial", "gold", "Solo"])
def test_only_solo_can_be_bought(plan):
    with pytest.raises(PlanNotPurchasable) as refused:
        billing().service.checkout(ADMIN, CheckoutRequest(plan=plan))
    assert [error.loc for error in refused.value.errors] == [("plan",)]


def test_the_portal_needs_a_merchant_customer():
    with pytest.raises(NoMerchantCustomer):
        with_trial().service.portal(ADMIN)
