"""Locks that ran out: released by the store for the lost attempt to be recorded (ADR 0031)."""

from datetime import datetime, timedelta

import pytest

from ecp_core.errors import LockLost
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.tasks import rules
from ecp_core.runs.tasks.model import Task, TaskStatus
from ecp_core.runs.tasks.rules import LOCK_EXPIRED
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.tasks.samples import (
    LATER,
    claim_now,
    offer_all,
    take_now,
    task,
)
from ecp_core.testing.samples import NOW


def expire(
    uow: UnitOfWorkFactory,
    *,
    now: datetime = LATER,
    limit: int = 100,
    tenant: str | None = None,
    topics: tuple[str, ...] | None = None,
) -> list[Task]:
    """Release the expired locks in one committed unit."""
    with uow() as tx:
        released = tx.tasks.expire(now, limit=limit, tenant_id=tenant, topics=topics)
        tx.commit()
    return released


@pytest.mark.spec("C10 external-tasks")
class TaskExpiryConformance(StoreSuite):
    """The release of locks that ran out, on every store."""

    def test_only_locks_that_ran_out_are_released_and_each_keeps_its_worker(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Only locks that ran out are released; each keeps the worker that held it."""
        offer_all(
            uow, task("a-short", lock_seconds=5), task("b-long", lock_seconds=600), task("c-idle")
        )
        claim_now(uow, limit=2)
        assert expire(uow, now=NOW + timedelta(seconds=4)) == []
        (released,) = expire(uow, now=NOW + timedelta(seconds=5))
        assert released.task_id == "a-short"
        assert (released.status, released.worker_id, released.error) == (
            TaskStatus.WAITING,
            "w1",
            LOCK_EXPIRED,
        )
        assert released.locked_until is None
        assert expire(uow, now=NOW + timedelta(seconds=5)) == []  # released once
        with uow() as tx:
            assert tx.tasks.get("t1", "a-short") == released
            idle = tx.tasks.get("t1", "c-idle")
            assert idle is not None
            assert idle.status is TaskStatus.WAITING

    def test_the_last_attempt_running_out_fails_the_task(self, uow: UnitOfWorkFactory) -> None:
        """A lock of the last attempt that runs out fails the task for good."""
        offer_all(uow, task("task-1", max_attempts=1))
        claim_now(uow)
        (released,) = expire(uow)
        assert released.status is TaskStatus.FAILED
        assert claim_now(uow, now=LATER, worker="w2") == []

    def test_a_released_task_goes_to_the_next_claim_and_the_old_token_is_lost(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A released task goes to the next claim; the old token's completion is lost."""
        offer_all(uow, task("task-1"))
        (first,) = claim_now(uow)
        expire(uow)
        token = first.lock_token
        assert token is not None
        with uow() as tx, pytest.raises(LockLost):
            tx.tasks.complete("t1", "task-1", lock_token=token, output={}, now=LATER)
        (second,) = claim_now(uow, now=LATER, worker="w2")
        assert (second.attempt, second.worker_id) == (2, "w2")

    def test_a_claim_that_takes_an_expired_lock_hands_back_the_lost_attempt(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A claim takes a task whose lock ran out as ``rules.take`` does, with its lost attempt.

        The claim is what the rules make of the stored task (one statement on PostgreSQL, the
        rules applied in memory); a task claimed while waiting has no lost attempt.
        """
        offer_all(uow, task("task-1"), task("task-2", created_at=NOW + timedelta(seconds=1)))
        (first,) = claim_now(uow, limit=1)
        taken, fresh = take_now(uow, now=LATER, worker="w2", lock_seconds=30)
        assert (taken.task.task_id, fresh.task.task_id, fresh.lost) == ("task-1", "task-2", None)
        assert taken.lost == rules.expire(first, LATER)
        assert taken.lost is not None
        assert (taken.lost.attempt, taken.lost.worker_id, taken.lost.status) == (
            1,
            "w1",
            TaskStatus.WAITING,
        )
        token = taken.task.lock_token
        assert token is not None
        assert token != first.lock_token
        assert taken.task == rules.claim(
            taken.lost, worker_id="w2", lock_token=token, now=LATER, lock_seconds=30
        )
        assert fresh.task.error is None
        with uow() as tx:
            assert tx.tasks.get("t1", "task-1") == taken.task
        assert expire(uow, now=LATER) == []  # the claim released it: nothing left to sweep

    def test_an_expired_lock_of_the_last_attempt_is_the_sweeps_not_a_claims(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A lock of the last attempt that ran out is not claimed; the sweep fails the task."""
        offer_all(uow, task("task-1", max_attempts=1))
        claim_now(uow)
        assert take_now(uow, now=LATER, worker="w2") == []
        (released,) = expire(uow)
        assert released.status is TaskStatus.FAILED

    def test_erasing_a_run_empties_its_tasks_payloads_only(self, uow: UnitOfWorkFactory) -> None:
        """Erasing a run empties its tasks' arguments, state, output and error, nothing else."""
        mine = task("mine", run_id="run-1", arguments={"email": "a@example.com"})
        offer_all(uow, mine, task("other", run_id="run-2", arguments={"keep": True}))
        (claimed,) = claim_now(uow, limit=1)
        assert claimed.lock_token is not None
        with uow() as tx:
            tx.tasks.complete(
                "t1", "mine", lock_token=claimed.lock_token, output={"x": 1}, now=LATER
            )
            assert tx.tasks.erase_run("t2", "run-1") == 0
            assert tx.tasks.erase_run("t1", "run-1") == 1
            assert tx.tasks.erase_run("t1", "run-1") == 0
            tx.commit()
        with uow() as tx:
            erased, kept = tx.tasks.get("t1", "mine"), tx.tasks.get("t1", "other")
        assert erased is not None
        assert kept is not None
        assert (erased.arguments, erased.state, erased.output, erased.error) == ({}, {}, {}, None)
        assert (erased.status, erased.worker_id) == (TaskStatus.COMPLETED, "w1")
        assert kept.arguments == {"keep": True}

    def test_a_release_keeps_to_its_tenant_topics_and_limit(self, uow: UnitOfWorkFactory) -> None:
        """A release may keep to one tenant's topics, and takes at most its limit."""
        offer_all(
            uow,
            task("a"),
            task("b"),
            task("ship", topic="ship"),
            task("other", tenant="t2"),
        )
        claim_now(uow, limit=2)
        claim_now(uow, topics=("ship",))
        claim_now(uow, tenant="t2")
        assert [t.task_id for t in expire(uow, tenant="t1", topics=("ship",))] == ["ship"]
        assert [t.task_id for t in expire(uow, tenant="t1", limit=1)] == ["a"]  # by lock end, id
        assert sorted(t.task_id for t in expire(uow)) == ["b", "other"]
