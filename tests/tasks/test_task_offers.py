"""The rings a process makes for the tasks it makes claimable (ADR 0071).

Without a notification listener the process rings the claims itself: one claim for a task whose
topic it knows, every claim of the tenant otherwise, every claim for released locks. While the
listener is connected it rings nothing: each task's notification rings one claim instead.
"""

import pytest

from ecp_http.server.task_offers import TaskOffers

pytestmark = [pytest.mark.unit, pytest.mark.spec("C10 tenant-keyed-claim-wakeups")]


def waiting(offers: TaskOffers) -> list:
    """Two claims of acme for ``work``, one of acme for ``mail``, one of globex for ``work``."""
    specs = [("acme", {"work"}), ("acme", {"work"}), ("acme", {"mail"}), ("globex", {"work"})]
    return [offers.bell.watch(tenant, 30, frozenset(topics)) for tenant, topics in specs]


@pytest.mark.parametrize(
    ("ring", "woken"),
    [
        (lambda o: o.offered("acme", "work"), 1),  # one task, its topic known: one claim
        (lambda o: o.offered("acme"), 3),  # a run waiting for a task: every claim of the tenant
        (lambda o: o.released(), 4),  # locks of any tenant ran out: every claim
    ],
)
def test_without_a_listener_the_process_rings_its_offers(ring, woken):
    offers = TaskOffers()
    waiting(offers)
    ring(offers)
    assert offers.bell.woken == woken


def test_while_the_listener_is_connected_the_notifications_ring_instead():
    offers = TaskOffers()
    waiting(offers)
    offers.listening.set()
    offers.offered("acme", "work")
    offers.offered("acme")
    offers.released()
    assert offers.bell.woken == 0
    offers.listening.clear()  # reconnecting: the process rings again
    offers.offered("acme", "work")
    assert offers.bell.woken == 1
