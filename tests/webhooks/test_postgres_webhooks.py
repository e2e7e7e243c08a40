"""The webhook outbox on a real PostgreSQL: concurrent workers never claim the same delivery."""

import concurrent.futures
import threading
from datetime import timedelta

import attrs
import pytest

from ecp_core.errors import Conflict
from ecp_core.testing.conformance.webhooks import attempt, delivery, ids, subscription
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.model import DeliveryStatus

pytestmark = pytest.mark.integration

LATER = NOW + timedelta(hours=1)


def queue(uow, count):
    with uow() as tx:
        for n in range(count):
            tx.webhooks.add_delivery(delivery(f"del-{n:03}", tenant=f"t{n % 3}", due=n))
        tx.commit()
    return [f"del-{n:03}" for n in range(count)]


def test_two_units_of_work_claiming_at_once_get_disjoint_deliveries(postgres_store):
    uow = postgres_store.unit_of_work
    every = queue(uow, 5)
    with uow() as first, uow() as second:
        # Row locks are never waited for: a blocked claim fails fast instead of hanging.
        second._conn.execute("SET LOCAL lock_timeout = '2s'")
        assert ids(first.webhooks.claim_due(LATER, 2)) == every[:2]
        assert ids(second.webhooks.claim_due(LATER, 10)) == every[2:]
        # Its own locks do not hide rows from it; the other's do.
        assert ids(first.webhooks.claim_due(LATER, 10)) == every[:2]
    with uow() as first, uow() as second:
        claimed = first.webhooks.claim_due(LATER, 10)
        assert ids(claimed) == every
        assert second.webhooks.claim_due(LATER, 10) == []
        # The holder finishes one delivery and commits: the rest are free again, that one done.
        first.webhooks.save_delivery(attrs.evolve(claimed[0], status=DeliveryStatus.DELIVERED))
        first.commit()
        assert ids(second.webhooks.claim_due(LATER, 10)) == every[1:]


def test_a_rolled_back_claim_releases_its_deliveries(postgres_store):
    uow = postgres_store.unit_of_work
    every = queue(uow, 3)
    with uow() as waiting:
        with uow() as crashed:
            assert ids(crashed.webhooks.claim_due(LATER, 10)) == every
            assert waiting.webhooks.claim_due(LATER, 10) == []
        assert ids(waiting.webhooks.claim_due(LATER, 10)) == every


@pytest.mark.spec("§6.1 at-least-once")
def test_concurrent_workers_deliver_every_delivery_exactly_once(postgres_store):
    uow = postgres_store.unit_of_work
    every = queue(uow, 60)
    workers = 6
    start = threading.Barrier(workers)

    def work():
        done = []
        start.wait()
        while True:
            with uow() as tx:
                claimed = tx.webhooks.claim_due(LATER, 3)
                if not claimed:
                    return done
                for found in claimed:
                    tx.webhooks.add_attempt(attempt(found.delivery_id, found.attempts + 1, 204))
                    tx.webhooks.save_delivery(
                        attrs.evolve(
                            found, status=DeliveryStatus.DELIVERED, attempts=found.attempts + 1
                        )
                    )
                tx.commit()
                done.extend(ids(claimed))

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = [f.result(timeout=60) for f in [pool.submit(work) for _ in range(workers)]]
    delivered = [delivery_id for result in results for delivery_id in result]
    assert sorted(delivered) == every  # each exactly once
    with uow() as tx:
        assert tx.webhooks.claim_due(LATER, 100) == []
        for n, delivery_id in enumerate(every):
            tenant = f"t{n % 3}"
            assert tx.webhooks.delivery(tenant, delivery_id).attempts == 1
            assert tx.webhooks.attempts(tenant, delivery_id) == [attempt(delivery_id, 1, 204)]


def test_on_postgres_a_repeated_attempt_number_is_a_conflict(postgres_store):
    """Memory appends a second attempt with the same number; the primary key refuses it."""
    uow = postgres_store.unit_of_work
    with uow() as tx:
        tx.webhooks.add_delivery(delivery("del-1"))
        tx.webhooks.add_attempt(attempt("del-1", 1, status_code=500))
        with pytest.raises(Conflict):
            tx.webhooks.add_attempt(attempt("del-1", 1, status_code=204))
        tx.webhooks.add_attempt(attempt("del-1", 2, status_code=204))  # still usable
        tx.commit()
    with uow() as tx:
        assert tx.webhooks.attempts("t1", "del-1") == [
            attempt("del-1", 1, status_code=500),
            attempt("del-1", 2, status_code=204),
        ]


@pytest.mark.spec("C5 subscription-routes")
def test_a_deleted_subscription_keeps_its_row_and_secret(postgres_store):
    uow = postgres_store.unit_of_work
    with uow() as tx:
        tx.webhooks.add_subscription(subscription("sub-1"))
        assert tx.webhooks.delete_subscription("t1", "sub-1")
        tx.commit()
    with uow() as tx:
        row = tx._conn.execute(
            "SELECT secret, deleted_at FROM ecp_webhook_subscriptions WHERE subscription_id = 'sub-1'"
        ).fetchone()
        assert row["secret"] == subscription("sub-1").secret
        assert row["deleted_at"] is not None
