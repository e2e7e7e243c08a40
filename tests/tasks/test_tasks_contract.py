"""External tasks: the kit's suites on memory and PostgreSQL, and claims that skip locked rows."""

from datetime import timedelta

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.testing.conformance.tasks import (
    TaskExpiryConformance,
    TaskQueueProperties,
    TaskRepositoryConformance,
)
from ecp_core.testing.conformance.tasks.samples import task
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.contract


class TestTasks(OnEveryStore, TaskRepositoryConformance):
    pass


class TestTaskExpiry(OnEveryStore, TaskExpiryConformance):
    pass


class TestTaskQueueProperties(OnEveryStoreEachExample, TaskQueueProperties):
    pass


def _claim(tx, worker):
    return [
        c.task.task_id
        for c in tx.tasks.claim(
            "t1", ["charge"], worker_id=worker, now=NOW, lock_seconds=None, limit=1
        )
    ]


def test_concurrent_releases_skip_the_rows_another_transaction_holds(postgres_store):
    with postgres_store.unit_of_work() as tx:
        tx.tasks.offer(task("task-1"))
        tx.commit()
    with postgres_store.unit_of_work() as tx:
        tx.tasks.claim("t1", ["charge"], worker_id="w1", now=NOW, lock_seconds=1, limit=1)
        tx.commit()
    later = NOW + timedelta(seconds=2)
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        assert [t.task_id for t in first.tasks.expire(later, limit=10)] == ["task-1"]
        assert second.tasks.expire(later, limit=10) == []


def test_concurrent_claims_skip_the_rows_another_worker_holds(postgres_store):
    with postgres_store.unit_of_work() as tx:
        for task_id in ("task-1", "task-2"):
            tx.tasks.offer(task(task_id))
        tx.commit()
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        assert _claim(first, "w1") == ["task-1"]
        assert _claim(second, "w2") == ["task-2"]
        with postgres_store.unit_of_work() as third:
            assert _claim(third, "w3") == []
