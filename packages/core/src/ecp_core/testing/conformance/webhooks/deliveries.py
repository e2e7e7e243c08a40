"""The webhook delivery outbox on every store: deliveries, the due claim, attempts, dead letters."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.errors import Conflict, NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.webhooks.samples import attempt, delivery, ids, subscription
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.model import DeliveryStatus


class WebhookDeliveryConformance(StoreSuite):
    """The delivery outbox: deliveries, the due claim, attempts, dead letters, rollback."""

    def test_deliveries_keep_every_field_and_are_scoped_by_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Deliveries keep every field and are scoped by tenant."""
        full = attrs.evolve(
            delivery(
                "del-1", data={"nested": {"list": [1, 2.5, "é", None, {"k": False}]}, "n": -3}
            ),
            attempts=2,
            updated_at=NOW + timedelta(minutes=1),
            last_status_code=503,
            last_error="Service Unavailable",
            replay_of="del-0",
        )
        bare = delivery("del-2", tenant="t2", data={})
        with uow() as tx:
            tx.webhooks.add_delivery(full)
            tx.webhooks.add_delivery(bare)
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delivery("t1", "del-1") == full
            assert tx.webhooks.delivery("t2", "del-2") == bare
            assert tx.webhooks.delivery("t2", "del-1") is None
            assert tx.webhooks.delivery("t1", "del-2") is None
            assert tx.webhooks.delivery("t1", "nope") is None

    def test_a_read_delivery_is_a_copy(self, uow: UnitOfWorkFactory) -> None:
        """A read delivery is a copy."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
        with uow() as tx:
            tx.webhooks.delivery("t1", "del-1").payload.data["output"]["x"].append("changed")
            assert tx.webhooks.delivery("t1", "del-1") == delivery("del-1")

    def test_a_duplicate_delivery_id_is_a_conflict_in_any_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A duplicate delivery id is a conflict in any tenant.

        A store may report it by the next statement or the commit, and the transaction ends
        with it (ADR 0059): each duplicate is tried in a unit of work of its own.
        """
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
        for duplicate in (delivery("del-1", due=5), delivery("del-1", tenant="t2")):
            with uow() as tx, pytest.raises(Conflict):
                tx.webhooks.add_delivery(duplicate)
                tx.commit()
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-2"))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delivery("t1", "del-1") == delivery("del-1")
            assert tx.webhooks.delivery("t2", "del-1") is None
            assert tx.webhooks.delivery("t1", "del-2") == delivery("del-2")

    def test_save_delivery_replaces_a_stored_delivery_of_the_same_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Save delivery replaces a stored delivery of the same tenant."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
        retried = attrs.evolve(
            delivery("del-1"),
            attempts=1,
            next_attempt_at=NOW + timedelta(seconds=30),
            updated_at=NOW + timedelta(seconds=1),
            last_status_code=500,
            last_error="boom",
        )
        with uow() as tx:
            tx.webhooks.save_delivery(retried)
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delivery("t1", "del-1") == retried
            delivered = attrs.evolve(
                retried,
                status=DeliveryStatus.DELIVERED,
                attempts=2,
                last_status_code=204,
                last_error=None,
            )
            tx.webhooks.save_delivery(delivered)
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.delivery("t1", "del-1") == delivered

    def test_save_delivery_needs_a_stored_delivery_of_the_same_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Save delivery needs a stored delivery of the same tenant."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
        with uow() as tx:
            with pytest.raises(NotFound):
                tx.webhooks.save_delivery(delivery("nope"))
            with pytest.raises(NotFound):
                tx.webhooks.save_delivery(
                    attrs.evolve(delivery("del-1"), tenant_id="t2", status=DeliveryStatus.DEAD)
                )
            assert tx.webhooks.delivery("t1", "del-1") == delivery("del-1")
            assert tx.webhooks.delivery("t2", "del-1") is None
            assert tx.webhooks.dead_letters("t2", limit=10) == []

    @pytest.mark.spec("§6.1 retry-and-dead-letter")
    def test_claim_due_takes_pending_deliveries_due_by_now_across_tenants(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Claim due takes pending deliveries due by now across tenants."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-due", due=-10))
            tx.webhooks.add_delivery(delivery("del-now", due=0))
            tx.webhooks.add_delivery(delivery("del-later", due=1))
            tx.webhooks.add_delivery(delivery("del-t2", tenant="t2", due=-5))
            tx.webhooks.add_delivery(delivery("del-done", status=DeliveryStatus.DELIVERED, due=-20))
            tx.webhooks.add_delivery(delivery("del-dead", status=DeliveryStatus.DEAD, due=-20))
            tx.commit()
        with uow() as tx:
            claimed = tx.webhooks.claim_due(NOW, 10)
            assert ids(claimed) == ["del-due", "del-t2", "del-now"]
            assert claimed[0] == delivery("del-due", due=-10)
            assert ids(tx.webhooks.claim_due(NOW - timedelta(microseconds=1), 10)) == [
                "del-due",
                "del-t2",
            ]
            assert ids(tx.webhooks.claim_due(NOW + timedelta(seconds=1), 10)) == [
                "del-due",
                "del-t2",
                "del-now",
                "del-later",
            ]
            assert tx.webhooks.claim_due(NOW - timedelta(seconds=11), 10) == []

    def test_claim_due_is_oldest_first_by_due_time_then_id_in_code_point_order_and_limited(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Claim due is oldest first by due time then id in code point order and limited."""
        with uow() as tx:
            for delivery_id, due in (
                ("del-c", 2),
                ("del-b", 1),
                ("del-é", 1),
                ("del-B", 1),
                ("del-z", 0),
            ):
                tx.webhooks.add_delivery(delivery(delivery_id, due=due))
            tx.commit()
        later = NOW + timedelta(minutes=1)
        with uow() as tx:
            assert ids(tx.webhooks.claim_due(later, 10)) == [
                "del-z",
                "del-B",
                "del-b",
                "del-é",
                "del-c",
            ]
            assert ids(tx.webhooks.claim_due(later, 2)) == ["del-z", "del-B"]
            assert tx.webhooks.claim_due(later, 0) == []
            # A retry moves a delivery back in the queue; a delivered one leaves it.
            tx.webhooks.save_delivery(
                attrs.evolve(delivery("del-z"), next_attempt_at=NOW + timedelta(seconds=5))
            )
            tx.webhooks.save_delivery(
                attrs.evolve(delivery("del-B", due=1), status=DeliveryStatus.DELIVERED)
            )
            assert ids(tx.webhooks.claim_due(later, 10)) == ["del-b", "del-é", "del-c", "del-z"]

    @pytest.mark.spec("§6.1 retry-and-dead-letter")
    def test_attempts_are_listed_in_order_for_the_deliverys_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Attempts are listed in order for the deliverys tenant."""
        first = attempt("del-1", 1, error="connect timeout")
        second = attempt("del-1", 2, status_code=500, error="Internal Server Error")
        third = attempt("del-1", 3, status_code=204)
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.webhooks.add_delivery(delivery("del-2", tenant="t2"))
            for value in (first, second, third):
                tx.webhooks.add_attempt(value)
            tx.webhooks.add_attempt(attempt("del-2", 1, status_code=200))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.attempts("t1", "del-1") == [first, second, third]
            assert tx.webhooks.attempts("t2", "del-2") == [attempt("del-2", 1, status_code=200)]
            assert tx.webhooks.attempts("t2", "del-1") == []
            assert tx.webhooks.attempts("t1", "del-2") == []
            assert tx.webhooks.attempts("t1", "nope") == []

    def test_attempts_of_a_delivery_not_yet_stored_show_once_it_is(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Attempts of a delivery not yet stored show once it is."""
        with uow() as tx:
            tx.webhooks.add_attempt(attempt("del-1", 1, status_code=502))
            assert tx.webhooks.attempts("t1", "del-1") == []
            tx.webhooks.add_delivery(delivery("del-1"))
            assert tx.webhooks.attempts("t1", "del-1") == [attempt("del-1", 1, status_code=502)]

    @pytest.mark.spec("C5 subscription-routes")
    def test_dead_letters_page_newest_first_by_id(self, uow: UnitOfWorkFactory) -> None:
        """Dead letters page newest first by id."""
        dead = DeliveryStatus.DEAD
        with uow() as tx:
            for delivery_id in ("del-03", "del-01", "del-05", "del-02", "del-04", "del-B", "del-a"):
                tx.webhooks.add_delivery(delivery(delivery_id, status=dead, attempts=8))
            tx.webhooks.add_delivery(delivery("del-06", tenant="t2", status=dead))
            tx.webhooks.add_delivery(delivery("del-07", status=DeliveryStatus.PENDING))
            tx.webhooks.add_delivery(delivery("del-08", status=DeliveryStatus.DELIVERED))
            tx.commit()
        with uow() as tx:
            newest = tx.webhooks.dead_letters("t1", limit=3)
            assert ids(newest) == ["del-a", "del-B", "del-05"]
            assert newest[0] == delivery("del-a", status=dead, attempts=8)
            assert ids(tx.webhooks.dead_letters("t1", limit=3, before="del-05")) == [
                "del-04",
                "del-03",
                "del-02",
            ]
            assert ids(tx.webhooks.dead_letters("t1", limit=3, before="del-02")) == ["del-01"]
            assert tx.webhooks.dead_letters("t1", limit=3, before="del-01") == []
            assert ids(tx.webhooks.dead_letters("t1", limit=2, before="del-a")) == [
                "del-B",
                "del-05",
            ]
            assert ids(tx.webhooks.dead_letters("t1", limit=10, before="del-Z")) == [
                "del-B",
                "del-05",
                "del-04",
                "del-03",
                "del-02",
                "del-01",
            ]
            assert ids(tx.webhooks.dead_letters("t2", limit=10)) == ["del-06"]
            assert tx.webhooks.dead_letters("t3", limit=10) == []
            assert tx.webhooks.dead_letters("t1", limit=0) == []

    @pytest.mark.spec("§6.1 retry-and-dead-letter")
    def test_a_delivery_becomes_a_dead_letter_when_saved_dead(self, uow: UnitOfWorkFactory) -> None:
        """A delivery becomes a dead letter when saved dead."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.webhooks.save_delivery(attrs.evolve(delivery("del-1"), status=DeliveryStatus.DEAD))
            assert ids(tx.webhooks.dead_letters("t1", limit=10)) == ["del-1"]
            assert tx.webhooks.claim_due(NOW, 10) == []

    def test_uncommitted_webhook_writes_are_rolled_back(self, uow: UnitOfWorkFactory) -> None:
        """Uncommitted webhook writes are rolled back."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-2"))
            assert tx.webhooks.delete_subscription("t1", "sub-1")
            tx.webhooks.add_delivery(delivery("del-2", status=DeliveryStatus.DEAD))
            tx.webhooks.save_delivery(
                attrs.evolve(delivery("del-1"), status=DeliveryStatus.DELIVERED)
            )
            tx.webhooks.add_attempt(attempt("del-1", 1, status_code=200))
            assert tx.webhooks.attempts("t1", "del-1") == [attempt("del-1", 1, status_code=200)]
            assert tx.webhooks.subscriptions("t1") == [subscription("sub-2")]
        with uow() as tx:
            assert tx.webhooks.subscriptions("t1") == [subscription("sub-1")]
            assert tx.webhooks.subscription("t1", "sub-2") is None
            assert tx.webhooks.delivery("t1", "del-1") == delivery("del-1")
            assert tx.webhooks.delivery("t1", "del-2") is None
            assert tx.webhooks.attempts("t1", "del-1") == []
            assert tx.webhooks.dead_letters("t1", limit=10) == []
            assert ids(tx.webhooks.claim_due(NOW, 10)) == ["del-1"]

    def test_rollback_keeps_what_was_committed_in_the_same_unit_of_work(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Rollback keeps what was committed in the same unit of work."""
        with uow() as tx:
            tx.webhooks.add_delivery(delivery("del-1"))
            tx.commit()
            tx.webhooks.add_attempt(attempt("del-1", 1, status_code=500))
            tx.webhooks.add_delivery(delivery("del-2"))
        with uow() as tx:
            assert ids(tx.webhooks.claim_due(NOW, 10)) == ["del-1"]
            assert tx.webhooks.attempts("t1", "del-1") == []

    def test_deliveries_list_newest_first_by_status_in_keyset_pages(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The tenant's deliveries by id, newest first, of one status, older than a cursor."""
        dead = DeliveryStatus.DEAD
        with uow() as tx:
            for made in (
                delivery("del-1"),
                delivery("del-2", status=dead, attempts=3),
                delivery("del-3", status=DeliveryStatus.DELIVERED, attempts=1),
                delivery("del-4", status=dead, attempts=3),
                delivery("del-5", tenant="t2"),
            ):
                tx.webhooks.add_delivery(made)
            tx.commit()
        with uow() as tx:
            found = tx.webhooks.deliveries
            assert ids(found("t1", limit=10)) == ["del-4", "del-3", "del-2", "del-1"]
            assert ids(found("t1", limit=2)) == ["del-4", "del-3"]
            assert ids(found("t1", limit=10, before="del-3")) == ["del-2", "del-1"]
            assert ids(found("t1", limit=10, status=dead)) == ["del-4", "del-2"]
            assert ids(found("t1", limit=10, status=dead, before="del-4")) == ["del-2"]
            assert ids(found("t2", limit=10)) == ["del-5"]
            assert found("t3", limit=10) == []

    def test_endpoint_health_counts_a_windows_deliveries_by_subscription_and_status(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Per subscription: the window's deliveries by status and the latest attempt's answer."""
        answered = attrs.evolve(
            delivery("del-2", status=DeliveryStatus.DEAD, attempts=3),
            last_status_code=500,
            updated_at=NOW + timedelta(minutes=2),
        )
        earlier = attrs.evolve(
            delivery("del-3", status=DeliveryStatus.DELIVERED, attempts=1),
            last_status_code=200,
            updated_at=NOW + timedelta(minutes=1),
        )
        old = attrs.evolve(delivery("del-0"), created_at=NOW - timedelta(days=2))
        with uow() as tx:
            for made in (
                delivery("del-1"),
                answered,
                earlier,
                old,
                delivery("del-4", subscription_id="sub-2"),
                delivery("del-5", tenant="t2"),
            ):
                tx.webhooks.add_delivery(made)
            tx.commit()
        with uow() as tx:
            first, second = tx.webhooks.endpoint_health("t1", NOW - timedelta(hours=1))
            assert (first.subscription_id, first.pending, first.delivered, first.dead) == (
                "sub-1",
                1,
                1,
                1,
            )
            assert (first.last_status_code, first.last_attempt_at) == (
                500,
                NOW + timedelta(minutes=2),
            )
            assert (second.subscription_id, second.pending, second.last_status_code) == (
                "sub-2",
                1,
                None,
            )
            assert second.last_attempt_at is None
            assert tx.webhooks.endpoint_health("t3", NOW - timedelta(hours=1)) == []
