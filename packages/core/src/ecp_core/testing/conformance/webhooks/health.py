"""The webhook outbox's delivery counts on every store (audit delivery health, ADR 0042)."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.webhooks.samples import attempt, delivery
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.health import AttemptOutcome, DeliveryCounts, attempt_outcome
from ecp_core.webhooks.model import Delivery, DeliveryAttempt, DeliveryStatus, WebhookEventType

WINDOW_START = NOW - timedelta(hours=1)

EDGE_CODES = (None, 100, 199, 200, 204, 299, 300, 302, 399, 400, 404, 408, 409, 429, 499, 500, 503)
"""Status codes on and around every boundary of :func:`attempt_outcome`."""


def _attempted(
    delivery_id: str,
    codes: tuple[int | None, ...],
    status: DeliveryStatus,
    *,
    tenant: str = "t1",
    at: timedelta = timedelta(0),
    event_type: WebhookEventType = WebhookEventType.RUN_COMPLETED,
) -> tuple[Delivery, list[DeliveryAttempt]]:
    """A delivery created ``at`` after NOW whose attempts answered ``codes``, ending ``status``."""
    made = delivery(delivery_id, tenant=tenant, event_type=event_type)
    attempts = [
        attrs.evolve(
            attempt(delivery_id, number, code), occurred_at=NOW + at + timedelta(seconds=number)
        )
        for number, code in enumerate(codes, start=1)
    ]
    last = attempts[-1].occurred_at if attempts else NOW + at
    return (
        attrs.evolve(
            made, status=status, attempts=len(codes), created_at=NOW + at, updated_at=last
        ),
        attempts,
    )


def _store(uow: UnitOfWorkFactory, *made: tuple[Delivery, list[DeliveryAttempt]]) -> None:
    with uow() as tx:
        for found, attempts in made:
            tx.webhooks.add_delivery(found)
            for each in attempts:
                tx.webhooks.add_attempt(each)
        tx.commit()


class WebhookDeliveryHealthConformance(StoreSuite):
    """``delivery_counts``: the queue now, and what was queued, attempted and lost in a window."""

    def test_counts_cover_the_window_and_the_tenant(self, uow: UnitOfWorkFactory) -> None:
        """Pending counts now; the rest counts attempts and deliveries since the window start."""
        two_days = -timedelta(days=2)
        _store(
            uow,
            _attempted("d-pending", (), DeliveryStatus.PENDING),
            _attempted("d-delivered", (503, 200), DeliveryStatus.DELIVERED),
            _attempted("d-dead", (404, None, 500), DeliveryStatus.DEAD),
            _attempted("d-old-dead", (500, 500), DeliveryStatus.DEAD, at=two_days),
            _attempted("d-old-pending", (502,), DeliveryStatus.PENDING, at=two_days),
            _attempted("d-other", (500,), DeliveryStatus.DEAD, tenant="t2"),
        )
        with uow() as tx:
            counts = tx.webhooks.delivery_counts("t1", WINDOW_START)
            other = tx.webhooks.delivery_counts("t2", WINDOW_START)
            nobody = tx.webhooks.delivery_counts("t3", WINDOW_START)
            ever = tx.webhooks.delivery_counts("t1", NOW - timedelta(days=3))
        assert counts == DeliveryCounts(
            queue_depth=2, queued=3, delivered=1, retried=3, rejected=1, failed=3, abandoned=1
        )
        assert other == DeliveryCounts(queued=1, failed=1, abandoned=1)
        assert nobody == DeliveryCounts()
        assert ever == DeliveryCounts(
            queue_depth=2, queued=5, delivered=1, retried=4, rejected=1, failed=6, abandoned=2
        )

    def test_attempts_are_classified_as_attempt_outcome_says(self, uow: UnitOfWorkFactory) -> None:
        """The store's classification is the Python rule's at every boundary (the SQL twin)."""
        _store(
            uow,
            *(
                _attempted(f"d-{number:02d}", (code,), DeliveryStatus.PENDING)
                for number, code in enumerate(EDGE_CODES)
            ),
        )
        outcomes = [attempt_outcome(code) for code in EDGE_CODES]
        with uow() as tx:
            counts = tx.webhooks.delivery_counts("t1", WINDOW_START)
        assert counts == DeliveryCounts(
            queue_depth=len(EDGE_CODES),
            queued=len(EDGE_CODES),
            delivered=outcomes.count(AttemptOutcome.DELIVERED),
            rejected=outcomes.count(AttemptOutcome.REJECTED),
            failed=outcomes.count(AttemptOutcome.FAILED),
        )
        assert counts.delivered == 3
        assert counts.rejected == 4

    def test_the_window_start_is_inclusive(self, uow: UnitOfWorkFactory) -> None:
        """An attempt or delivery exactly at ``since`` counts; one a microsecond earlier does not."""
        _store(uow, _attempted("d-1", (200,), DeliveryStatus.DELIVERED))
        first_attempt = NOW + timedelta(seconds=1)
        with uow() as tx:
            at = tx.webhooks.delivery_counts("t1", first_attempt)
            after = tx.webhooks.delivery_counts("t1", first_attempt + timedelta(microseconds=1))
            at_creation = tx.webhooks.delivery_counts("t1", NOW)
        assert at == DeliveryCounts(delivered=1)
        assert after == DeliveryCounts()
        assert at_creation == DeliveryCounts(queued=1, delivered=1)

    @pytest.mark.spec("C11 test-event")
    def test_test_events_are_not_counted(self, uow: UnitOfWorkFactory) -> None:
        """``webhook.test`` deliveries are left out of every figure (ADR 0054)."""
        test = WebhookEventType.WEBHOOK_TEST
        _store(
            uow,
            _attempted("d-run", (500, 200), DeliveryStatus.DELIVERED),
            _attempted("d-test-dead", (404, 500), DeliveryStatus.DEAD, event_type=test),
            _attempted("d-test-pending", (503,), DeliveryStatus.PENDING, event_type=test),
            _attempted("d-test-ok", (200,), DeliveryStatus.DELIVERED, event_type=test),
        )
        with uow() as tx:
            counts = tx.webhooks.delivery_counts("t1", WINDOW_START)
        assert counts == DeliveryCounts(queued=1, delivered=1, retried=1, failed=1)


__all__ = ["EDGE_CODES", "WebhookDeliveryHealthConformance"]
