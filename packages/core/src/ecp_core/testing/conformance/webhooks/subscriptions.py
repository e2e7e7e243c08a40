"""Webhook subscriptions on every store: kept with their secret, listed, matched, deleted."""

import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.webhooks.samples import (
    COMPLETED,
    REQUESTED,
    STARTED,
    delivery,
    ids,
    subscription,
)
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.model import WebhookEventType


class WebhookSubscriptionConformance(StoreSuite):
    """Subscriptions: stored per tenant with their secret, matched by deployment and event type."""

    @pytest.mark.spec("C5 subscription-routes", "§5 tenant-isolation")
    def test_subscriptions_are_stored_with_their_secret_and_scoped_by_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Subscriptions are stored with their secret and scoped by tenant."""
        first = subscription("sub-1", secret="s" * 512)
        other = subscription("sub-2", tenant="t2", events=(REQUESTED,))
        with uow() as tx:
            tx.webhooks.add_subscription(first)
            tx.webhooks.add_subscription(other)
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") == first
            assert tx.webhooks.subscription("t1", "sub-1").secret == "s" * 512
            assert tx.webhooks.subscription("t2", "sub-2") == other
            assert tx.webhooks.subscription("t2", "sub-1") is None
            assert tx.webhooks.subscription("t1", "sub-2") is None
            assert tx.webhooks.subscription("t1", "nope") is None
            assert tx.webhooks.subscriptions("t1") == [first]
            assert tx.webhooks.subscriptions("t2") == [other]
            assert tx.webhooks.subscriptions("t3") == []

    @pytest.mark.spec("C5 subscription-routes")
    def test_subscriptions_are_listed_oldest_first_then_by_id_in_code_point_order(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Subscriptions are listed oldest first then by id in code point order."""
        with uow() as tx:
            for subscription_id, offset in (("sub-z", 0), ("sub-a", 1), ("sub-B", 1), ("sub-é", 1)):
                tx.webhooks.add_subscription(subscription(subscription_id, offset=offset))
            tx.commit()
        with uow() as tx:
            listed = tx.webhooks.subscriptions("t1")
            assert ids(listed, "subscription_id") == ["sub-z", "sub-B", "sub-a", "sub-é"]
            assert listed[1] == subscription("sub-B", offset=1)

    def test_a_duplicate_subscription_id_is_a_conflict_in_any_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A duplicate subscription id is a conflict in any tenant."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            with pytest.raises(Conflict):
                tx.webhooks.add_subscription(subscription("sub-1", ref="other", offset=3))
            with pytest.raises(Conflict):
                tx.webhooks.add_subscription(subscription("sub-1", tenant="t2"))
            tx.webhooks.add_subscription(subscription("sub-2"))  # the transaction is still usable
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscriptions("t1") == [subscription("sub-1"), subscription("sub-2")]
            assert tx.webhooks.subscriptions("t2") == []

    @pytest.mark.spec("§6.1 lifecycle-events")
    def test_matching_selects_live_subscriptions_of_the_deployment_and_event_type(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Matching selects live subscriptions of the deployment and event type."""
        started_only = subscription("sub-1", events=(STARTED,), offset=2)
        both = subscription("sub-2", events=(COMPLETED, STARTED), offset=1)
        every = subscription("sub-3", events=tuple(WebhookEventType))
        other_ref = subscription("sub-4", ref="dep-2", events=(STARTED,))
        other_tenant = subscription("sub-5", tenant="t2", events=(STARTED,))
        with uow() as tx:
            for value in (started_only, both, every, other_ref, other_tenant):
                tx.webhooks.add_subscription(value)
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.matching("t1", "dep", STARTED) == [every, both, started_only]
            assert tx.webhooks.matching("t1", "dep", COMPLETED) == [every, both]
            assert tx.webhooks.matching("t1", "dep", WebhookEventType.RUN_FAILED) == [every]
            assert tx.webhooks.matching("t1", "dep-2", STARTED) == [other_ref]
            assert tx.webhooks.matching("t1", "dep-2", COMPLETED) == []
            assert tx.webhooks.matching("t2", "dep", STARTED) == [other_tenant]
            assert tx.webhooks.matching("t2", "dep", COMPLETED) == []
            assert tx.webhooks.matching("t3", "dep", STARTED) == []
            assert tx.webhooks.matching("t1", "nope", STARTED) == []

    @pytest.mark.spec("C5 subscription-routes")
    def test_a_deleted_subscription_is_gone_but_its_deliveries_stay(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A deleted subscription is gone but its deliveries stay."""
        kept = subscription("sub-2", offset=1)
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            tx.webhooks.add_subscription(kept)
            tx.webhooks.add_delivery(delivery("del-1", subscription_id="sub-1"))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delete_subscription("t2", "sub-1") is False  # another tenant's
            assert tx.webhooks.delete_subscription("t1", "nope") is False
            assert tx.webhooks.delete_subscription("t1", "sub-1") is True
            assert tx.webhooks.delete_subscription("t1", "sub-1") is False  # already gone
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") is None
            assert tx.webhooks.subscriptions("t1") == [kept]
            assert tx.webhooks.matching("t1", "dep", STARTED) == [kept]
            assert tx.webhooks.delete_subscription("t1", "sub-1") is False
            assert tx.webhooks.delivery("t1", "del-1") == delivery("del-1", subscription_id="sub-1")
            assert ids(tx.webhooks.claim_due(NOW, 10)) == ["del-1"]

    def test_the_id_of_a_deleted_subscription_can_be_used_again(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The id of a deleted subscription can be used again."""
        again = subscription("sub-1", tenant="t2", ref="dep-2", events=(REQUESTED,), offset=5)
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delete_subscription("t1", "sub-1")
            tx.webhooks.add_subscription(again)
            with pytest.raises(Conflict):
                tx.webhooks.add_subscription(subscription("sub-1"))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") is None
            assert tx.webhooks.subscriptions("t1") == []
            assert tx.webhooks.subscription("t2", "sub-1") == again
            assert tx.webhooks.matching("t2", "dep-2", REQUESTED) == [again]
