"""Delivery health rules: how an attempt is classified, and when events are being lost."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import ValidationFailed
from ecp_core.memory import MemoryStore
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.samples import NOW
from ecp_core.webhooks.health import (
    AttemptOutcome,
    AuditDeliveryHealth,
    DeliveryCounts,
    attempt_outcome,
)

pytestmark = [pytest.mark.unit, pytest.mark.spec("§2.3 audit-delivery-health")]

STATUS = st.none() | st.integers(min_value=100, max_value=599)


@given(status=STATUS)
def test_only_a_2xx_is_delivered_and_only_a_final_4xx_is_rejected(status):
    """2xx delivered; 4xx but 408/429 rejected; everything else (no answer included) failed."""
    outcome = attempt_outcome(status)
    if status is not None and 200 <= status < 300:
        assert outcome is AttemptOutcome.DELIVERED
    elif status is not None and 400 <= status < 500 and status not in (408, 429):
        assert outcome is AttemptOutcome.REJECTED
    else:
        assert outcome is AttemptOutcome.FAILED


COUNT = st.integers(min_value=0, max_value=10**6)


@given(
    counts=st.builds(
        DeliveryCounts,
        queue_depth=COUNT,
        queued=COUNT,
        delivered=COUNT,
        retried=COUNT,
        rejected=COUNT,
        failed=COUNT,
        abandoned=COUNT,
    )
)
def test_losing_events_exactly_when_a_loss_counter_is_not_zero(counts):
    """Delivered, queued, retried and the queue never say loss; rejected, failed, abandoned do."""
    health = AuditDeliveryHealth.of(counts)
    assert health.losing_events is (counts.rejected + counts.failed + counts.abandoned > 0)
    assert (health.queue_depth, health.delivered, health.abandoned) == (
        counts.queue_depth,
        counts.delivered,
        counts.abandoned,
    )


def test_the_window_defaults_to_24_hours_and_cannot_start_in_the_future():
    """No since: the last 24 hours; a since after now is refused."""
    clock = FixedClock(NOW)
    ecp = Ecp.build(MemoryStore().unit_of_work, signer=Ed25519Signer.generate(), clock=clock)
    assert ecp.webhooks.delivery_health("acme") == AuditDeliveryHealth.of(DeliveryCounts())
    with pytest.raises(ValidationFailed) as refused:
        ecp.webhooks.delivery_health("acme", clock.now().replace(year=2099))
    assert refused.value.errors[0].loc == ("query", "since")
