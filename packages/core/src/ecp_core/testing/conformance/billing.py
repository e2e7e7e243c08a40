"""SubscriptionRepository and MerchantEventRepository: one subscription per tenant, one event per id."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.billing.events import MerchantEventType, StoredMerchantEvent
from ecp_core.billing.model import (
    PlanName,
    Subscription,
    SubscriptionStatus,
    trial_subscription,
)
from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW


def paid(tenant: str = "t1") -> Subscription:
    """A Solo subscription the merchant activated, with every optional field set."""
    return attrs.evolve(
        trial_subscription(tenant, NOW),
        plan=PlanName.SOLO,
        status=SubscriptionStatus.ACTIVE,
        period_start=NOW + timedelta(days=14),
        period_end=NOW + timedelta(days=44),
        merchant_subscription_id="sub_1",
        merchant_customer_id="ctm_1",
        price_id="pri_solo",
        last_event_id="evt_1",
        last_event_at=NOW + timedelta(days=14, microseconds=7),
        updated_at=NOW + timedelta(days=14, seconds=1),
    )


def stored_event(
    event_id: str = "evt_1", tenant: str = "t1", *, applied: bool = True
) -> StoredMerchantEvent:
    """An accepted merchant event."""
    return StoredMerchantEvent(
        event_id=event_id,
        digest=f"sha256:{event_id}",
        tenant_id=tenant,
        event_type=MerchantEventType.ACTIVATED,
        merchant_subscription_id="sub_1",
        occurred_at=NOW + timedelta(microseconds=1),
        applied=applied,
        received_at=NOW + timedelta(seconds=2),
    )


class SubscriptionRepositoryConformance(StoreSuite):
    """Subscriptions: one per tenant, read back exactly, replaced whole, rolled back uncommitted."""

    @pytest.mark.spec("§3.6 subscription-transitions")
    def test_a_subscription_round_trips_with_every_field(self, uow: UnitOfWorkFactory) -> None:
        """A trial and a paid subscription read back equal, the null period end included."""
        trial = attrs.evolve(trial_subscription("t2", NOW), period_end=None)
        with uow() as tx:
            tx.subscriptions.add(paid())
            tx.subscriptions.add(trial)
            tx.commit()
        with uow() as tx:
            assert tx.subscriptions.get("t1") == paid()
            assert tx.subscriptions.lock("t2") == trial
            assert tx.subscriptions.get("t3") is None
            assert tx.subscriptions.lock("t3") is None

    def test_a_tenant_has_one_subscription(self, uow: UnitOfWorkFactory) -> None:
        """Adding a second subscription for a tenant is a Conflict and keeps the first."""
        with uow() as tx:
            tx.subscriptions.add(trial_subscription("t1", NOW))
            tx.commit()
        with uow() as tx:
            with pytest.raises(Conflict):
                tx.subscriptions.add(paid())
            tx.commit()
        with uow() as tx:
            assert tx.subscriptions.get("t1") == trial_subscription("t1", NOW)

    def test_save_replaces_the_subscription_and_rolls_back_uncommitted(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Save replaces every field; a save that is not committed leaves the stored one."""
        with uow() as tx:
            tx.subscriptions.add(trial_subscription("t1", NOW))
            tx.commit()
        with uow() as tx:
            tx.subscriptions.save(paid())
            tx.commit()
        canceled = attrs.evolve(paid(), status=SubscriptionStatus.CANCELED)
        with uow() as tx:
            tx.subscriptions.save(canceled)
        with uow() as tx:
            assert tx.subscriptions.get("t1") == paid()


class MerchantEventRepositoryConformance(StoreSuite):
    """Merchant events: kept by id with their digest; an id is taken once; rolled back uncommitted."""

    @pytest.mark.spec("§6.3 merchant-events")
    def test_an_event_is_kept_by_id_and_an_id_is_taken_once(self, uow: UnitOfWorkFactory) -> None:
        """An event reads back equal; a second event under its id is a Conflict."""
        with uow() as tx:
            tx.merchant_events.add(stored_event())
            tx.merchant_events.add(stored_event("evt_2", "t2", applied=False))
            tx.commit()
        with uow() as tx:
            with pytest.raises(Conflict):
                tx.merchant_events.add(attrs.evolve(stored_event(), digest="sha256:other"))
            tx.commit()
        with uow() as tx:
            assert tx.merchant_events.get("evt_1") == stored_event()
            assert tx.merchant_events.get("evt_2") == stored_event("evt_2", "t2", applied=False)
            assert tx.merchant_events.get("evt_3") is None

    def test_an_uncommitted_event_is_forgotten(self, uow: UnitOfWorkFactory) -> None:
        """An event added without commit is not kept."""
        with uow() as tx:
            tx.merchant_events.add(stored_event())
        with uow() as tx:
            assert tx.merchant_events.get("evt_1") is None
