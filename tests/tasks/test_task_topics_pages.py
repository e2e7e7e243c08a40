"""The console's task overview pages (``TaskWork.topics``): every open topic exactly once.

Hypothesis draws tasks over a few topics and tenants in any state and a page size; walking the
keyset pages from the first gives each of the tenant's topics with an open task once, by name,
with the counts of its own tasks (ADR 0084).
"""

from datetime import timedelta

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.memory import MemoryStore
from ecp_core.runs.tasks.model import TaskStatus
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.conformance.tasks.samples import task
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.unit

_TASKS = st.lists(
    st.tuples(
        st.sampled_from(["t1", "t2"]),
        st.sampled_from(["alpha", "beta", "gamma", "delta", "é-topic", "z"]),
        st.sampled_from(list(TaskStatus)),
        st.booleans(),  # a locked task's lock ran out
    ),
    max_size=30,
)


@pytest.mark.spec("C15 console-tasks")
@settings(max_examples=60, deadline=None)
@given(drawn=_TASKS, limit=st.integers(1, 7))
def test_topic_pages_give_each_open_topic_once_with_its_counts(drawn, limit):
    store = MemoryStore()
    ecp = Ecp.build(store.unit_of_work, signer=Ed25519Signer.generate(), clock=FixedClock(NOW))
    with store.unit_of_work() as tx:
        for number, (tenant, topic, status, ran_out) in enumerate(drawn):
            locked = status is TaskStatus.LOCKED
            until = NOW + timedelta(seconds=-5 if ran_out else 60)
            made = task(f"task-{number}", tenant=tenant, topic=topic, created_at=NOW)
            tx.tasks.offer(
                attrs.evolve(
                    made,
                    status=status,
                    worker_id="w" if locked else None,
                    locked_until=until if locked else None,
                )
            )
        tx.commit()
    seen, cursor = [], None
    while True:
        page, cursor = ecp.tasks.topics("t1", limit=limit, cursor=cursor)
        assert len(page) <= limit
        seen += page
        if cursor is None:
            break
    open_tasks = [
        (topic, status, ran_out)
        for tenant, topic, status, ran_out in drawn
        if tenant == "t1" and status in (TaskStatus.WAITING, TaskStatus.LOCKED)
    ]
    assert [queue.topic for queue in seen] == sorted({topic for topic, _, _ in open_tasks})
    for queue in seen:
        mine = [(status, ran_out) for topic, status, ran_out in open_tasks if topic == queue.topic]
        assert queue.waiting == sum(status is TaskStatus.WAITING for status, _ in mine)
        assert queue.expired == sum(status is TaskStatus.LOCKED and out for status, out in mine)
        assert queue.locked == sum(status is TaskStatus.LOCKED and not out for status, out in mine)
        assert (queue.oldest_waiting_at is not None) == (queue.waiting > 0)
