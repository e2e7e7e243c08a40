"""The task repository's rules, one test each (ADR 0030)."""

from datetime import timedelta
from typing import Any

import attrs
import pytest

from ecp_core.errors import Conflict, LockLost, NotFound, RunCanceled
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.tasks.model import Task, TaskStatus
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.tasks.samples import LATER, claim_now, offer_all, task
from ecp_core.testing.samples import NOW


def run_with_open_and_done_tasks(uow: UnitOfWorkFactory) -> tuple[Task, str]:
    """Run ``run-1`` of t1 with a held, a queued and a completed task, beside two others.

    The others: a task of ``run-2`` and one of another tenant's ``run-1``. Returns the held
    task and its lock token.
    """
    offer_all(
        uow,
        task("held", run_id="run-1"),
        task("queued", run_id="run-1", topic="ship"),
        task("done", run_id="run-1", topic="file"),
        task("other-run", run_id="run-2"),
        task("other-tenant", run_id="run-1", tenant="t2"),
    )
    (held,) = claim_now(uow, limit=1)
    (done,) = claim_now(uow, topics=("file",))
    assert held.lock_token is not None
    assert done.lock_token is not None
    with uow() as tx:
        tx.tasks.complete("t1", "done", lock_token=done.lock_token, output={}, now=NOW)
        tx.commit()
    return held, held.lock_token


@pytest.mark.spec("C10 external-tasks")
class TaskRepositoryConformance(StoreSuite):
    """External tasks: offers, claims, heartbeats, completions, failures, listings."""

    def test_an_offered_task_keeps_every_field_and_belongs_to_its_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An offered task keeps every field and belongs to its tenant."""
        full = task("task-1", max_attempts=5, lock_seconds=120)
        offer_all(uow, full)
        with uow() as tx:
            assert tx.tasks.get("t1", "task-1") == full
            assert tx.tasks.get("t2", "task-1") is None
            assert tx.tasks.get("t1", "nope") is None
            with pytest.raises(Conflict):  # at once, or at the latest at the commit
                tx.tasks.offer(task("task-1", tenant="t2"))
                tx.commit()

    def test_a_claim_takes_the_oldest_of_its_tenant_and_topics_up_to_the_limit(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A claim takes the oldest of its tenant's tasks of its topics, up to the limit."""
        offer_all(
            uow,
            task("b", created_at=NOW),
            task("a", created_at=NOW + timedelta(seconds=1)),
            task("c", created_at=NOW),
            task("other-topic", topic="ship"),
            task("other-tenant", tenant="t2"),
        )
        first = claim_now(uow, limit=2)
        assert [t.task_id for t in first] == ["b", "c"]
        assert [t.task_id for t in claim_now(uow, worker="w2")] == ["a"]
        assert claim_now(uow) == []
        assert [t.task_id for t in claim_now(uow, topics=("ship", "charge"))] == ["other-topic"]
        assert [t.task_id for t in claim_now(uow, tenant="t2")] == ["other-tenant"]
        claimed = first[0]
        assert claimed.status is TaskStatus.LOCKED
        assert (claimed.worker_id, claimed.attempt) == ("w1", 1)
        assert claimed.locked_until == NOW + timedelta(seconds=60)
        assert claimed.lock_token
        assert first[0].lock_token != first[1].lock_token
        with uow() as tx:
            assert tx.tasks.get("t1", "b") == claimed

    def test_a_claim_may_set_the_lock_time(self, uow: UnitOfWorkFactory) -> None:
        """A claim may set the lock time; without one the task's own applies."""
        offer_all(uow, task("task-1", lock_seconds=5), task("task-2", lock_seconds=5))
        short, own = claim_now(uow, lock_seconds=300, limit=1) + claim_now(uow, limit=1)
        assert short.locked_until == NOW + timedelta(seconds=300)
        assert own.locked_until == NOW + timedelta(seconds=5)

    def test_an_expired_lock_is_claimable_again_under_a_new_token(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An expired lock is claimable again under a new token (at-least-once)."""
        offer_all(uow, task("task-1"))
        (first,) = claim_now(uow)
        assert claim_now(uow, now=NOW + timedelta(seconds=59), worker="w2") == []
        (second,) = claim_now(uow, now=NOW + timedelta(seconds=60), worker="w2")
        assert (second.worker_id, second.attempt) == ("w2", 2)
        assert second.lock_token != first.lock_token

    def test_a_heartbeat_extends_the_current_lock_only(self, uow: UnitOfWorkFactory) -> None:
        """A heartbeat extends the current lock only."""
        offer_all(uow, task("task-1"))
        (first,) = claim_now(uow)
        token = first.lock_token
        assert token is not None
        with uow() as tx:
            beat = tx.tasks.heartbeat(
                "t1", "task-1", lock_token=token, now=NOW + timedelta(seconds=50), lock_seconds=30
            )
            assert beat.locked_until == NOW + timedelta(seconds=80)
            with pytest.raises(LockLost):
                tx.tasks.heartbeat(
                    "t1", "task-1", lock_token=token + "x", now=NOW, lock_seconds=None
                )
            with pytest.raises(NotFound):
                tx.tasks.heartbeat("t2", "task-1", lock_token=token, now=NOW, lock_seconds=None)
            tx.commit()
        assert claim_now(uow, now=LATER, worker="w2") == []
        assert len(claim_now(uow, now=NOW + timedelta(seconds=80), worker="w2")) == 1
        with uow() as tx, pytest.raises(LockLost):
            tx.tasks.heartbeat("t1", "task-1", lock_token=token, now=LATER, lock_seconds=None)

    def test_a_completion_applies_once_and_again_is_a_no_op(self, uow: UnitOfWorkFactory) -> None:
        """A completion applies once; the same completion again changes nothing."""
        offer_all(uow, task("task-1"))
        (claimed,) = claim_now(uow)
        token = claimed.lock_token
        assert token is not None
        with uow() as tx:
            done, applied = tx.tasks.complete(
                "t1", "task-1", lock_token=token, output={"paid": True}, now=LATER
            )
            tx.commit()
        assert applied
        assert (done.status, done.output, done.locked_until) == (
            TaskStatus.COMPLETED,
            {"paid": True},
            None,
        )
        with uow() as tx:
            again, applied = tx.tasks.complete(
                "t1", "task-1", lock_token=token, output={"paid": False}, now=LATER
            )
            assert (again, applied) == (done, False)
            assert tx.tasks.get("t1", "task-1") == done
            with pytest.raises(NotFound):
                tx.tasks.complete("t2", "task-1", lock_token=token, output={}, now=LATER)
        assert claim_now(uow, now=LATER + timedelta(days=1)) == []

    def test_a_stale_token_after_another_claim_has_lost_its_lock(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A stale token after another claim has lost its lock."""
        offer_all(uow, task("task-1"))
        (first,) = claim_now(uow)
        (second,) = claim_now(uow, now=LATER, worker="w2")
        assert first.lock_token is not None
        assert second.lock_token is not None
        with uow() as tx:
            with pytest.raises(LockLost):
                tx.tasks.complete("t1", "task-1", lock_token=first.lock_token, output={}, now=LATER)
            with pytest.raises(LockLost):
                tx.tasks.fail("t1", "task-1", lock_token=first.lock_token, error="e", now=LATER)
            done, applied = tx.tasks.complete(
                "t1", "task-1", lock_token=second.lock_token, output={"by": "w2"}, now=LATER
            )
            assert applied
            assert done.worker_id == "w2"

    def test_an_expired_lock_not_yet_claimed_again_may_still_complete(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An expired lock that no other claim took may still complete."""
        offer_all(uow, task("task-1"))
        (claimed,) = claim_now(uow)
        assert claimed.lock_token is not None
        with uow() as tx:
            _, applied = tx.tasks.complete(
                "t1", "task-1", lock_token=claimed.lock_token, output={}, now=LATER
            )
            assert applied

    def test_a_failure_waits_for_its_retry_then_fails_for_good(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A failure waits out its retry; the last attempt's failure fails the task for good."""
        offer_all(uow, task("task-1", max_attempts=2))
        (first,) = claim_now(uow)
        assert first.lock_token is not None
        with uow() as tx:
            waiting, applied = tx.tasks.fail(
                "t1",
                "task-1",
                lock_token=first.lock_token,
                error="card declined",
                now=NOW,
                retry_after_seconds=30,
            )
            assert applied
            again, applied = tx.tasks.fail(
                "t1", "task-1", lock_token=first.lock_token, error="other", now=NOW
            )
            assert (again, applied) == (waiting, False)
            with pytest.raises(LockLost):
                tx.tasks.complete("t1", "task-1", lock_token=first.lock_token, output={}, now=NOW)
            tx.commit()
        assert waiting.status is TaskStatus.WAITING
        assert (waiting.error, waiting.not_before) == ("card declined", NOW + timedelta(seconds=30))
        assert claim_now(uow, now=NOW + timedelta(seconds=29)) == []
        (second,) = claim_now(uow, now=NOW + timedelta(seconds=30))
        assert (second.attempt, second.not_before) == (2, None)
        assert second.lock_token is not None
        with uow() as tx:
            failed, applied = tx.tasks.fail(
                "t1", "task-1", lock_token=second.lock_token, error="again", now=LATER
            )
            tx.commit()
        assert applied
        assert (failed.status, failed.error) == (TaskStatus.FAILED, "again")
        assert claim_now(uow, now=LATER + timedelta(days=1)) == []

    @pytest.mark.spec("C14 cancel-cascade")
    def test_a_withdrawn_task_is_never_claimed_and_refuses_its_holder(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Withdrawing a run's tasks takes its open ones only; their holder's reports are refused."""
        _, token = run_with_open_and_done_tasks(uow)
        with uow() as tx:
            withdrawn = tx.tasks.withdraw("t1", "run-1", LATER)
            tx.commit()
        assert [(t.task_id, t.status) for t in withdrawn] == [
            ("held", TaskStatus.WITHDRAWN),
            ("queued", TaskStatus.WITHDRAWN),
        ]
        assert withdrawn[0].worker_id == "w1"
        assert withdrawn[0].updated_at == LATER
        with uow() as tx:
            statuses = {
                (tenant, task_id): stored.status
                for tenant, task_id in (("t1", "done"), ("t1", "other-run"), ("t2", "other-tenant"))
                if (stored := tx.tasks.get(tenant, task_id)) is not None
            }
            assert tx.tasks.withdraw("t1", "run-1", LATER) == []
        assert statuses == {
            ("t1", "done"): TaskStatus.COMPLETED,
            ("t1", "other-run"): TaskStatus.WAITING,
            ("t2", "other-tenant"): TaskStatus.WAITING,
        }
        claimed = claim_now(uow, topics=("charge", "ship"), now=LATER)
        assert [t.task_id for t in claimed] == ["other-run"]
        with uow() as tx:
            with pytest.raises(RunCanceled):
                tx.tasks.heartbeat("t1", "held", lock_token=token, now=LATER, lock_seconds=None)
            with pytest.raises(RunCanceled):
                tx.tasks.complete("t1", "held", lock_token=token, output={}, now=LATER)
            with pytest.raises(RunCanceled):
                tx.tasks.fail("t1", "held", lock_token=token, error="late", now=LATER)

    @pytest.mark.spec("C17 migrate")
    def test_repointing_moves_the_open_tasks_of_the_run_and_keeps_their_locks(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Repointing a run's tasks (it moved version) takes its open ones; locks stay usable."""
        held, token = run_with_open_and_done_tasks(uow)
        with uow() as tx:
            moved = tx.tasks.repoint("t1", "run-1", "renamed", LATER)
            tx.commit()
        assert [(t.task_id, t.node_id, t.updated_at) for t in moved] == [
            ("held", "renamed", LATER),
            ("queued", "renamed", LATER),
        ]
        assert moved[0] == attrs.evolve(held, node_id="renamed", updated_at=LATER)
        with uow() as tx:
            nodes = {t.task_id: t.node_id for t in tx.tasks.for_run("t1", "run-1", limit=10)}
            assert nodes == {"held": "renamed", "queued": "renamed", "done": "pay"}
            others = [tx.tasks.get("t1", "other-run"), tx.tasks.get("t2", "other-tenant")]
            assert [t.node_id for t in others if t is not None] == ["pay", "pay"]
            tx.tasks.heartbeat("t1", "held", lock_token=token, now=LATER, lock_seconds=None)
        with uow() as tx:
            tx.tasks.repoint("t1", "run-1", "again", LATER)  # rolled back: nothing changes
        with uow() as tx:
            assert tx.tasks.get("t1", "held").node_id == "renamed"

    def test_a_claim_rolled_back_leaves_the_task_waiting(self, uow: UnitOfWorkFactory) -> None:
        """A claim rolled back leaves the task waiting."""
        offered = task("task-1")
        offer_all(uow, offered)
        with uow() as tx:
            assert (
                len(
                    tx.tasks.claim(
                        "t1", ["charge"], worker_id="w", now=NOW, lock_seconds=None, limit=1
                    )
                )
                == 1
            )
        with uow() as tx:
            assert tx.tasks.get("t1", "task-1") == offered

    def test_pages_filter_by_status_and_topic_in_id_order(self, uow: UnitOfWorkFactory) -> None:
        """Pages list a tenant's tasks by id, filtered by status and topic."""
        offer_all(
            uow,
            task("task-3"),
            task("task-1"),
            task("task-2", topic="ship"),
            task("task-4", tenant="t2"),
        )
        claim_now(uow, limit=1)  # task-1 and task-3 share created_at: task-1 goes first

        def ids(**query: Any) -> list[str]:
            with uow() as tx:
                return [t.task_id for t in tx.tasks.page("t1", **query)]

        assert ids(limit=10) == ["task-1", "task-2", "task-3"]
        assert ids(limit=2) == ["task-1", "task-2"]
        assert ids(limit=10, after="task-2") == ["task-3"]
        assert ids(limit=10, status=TaskStatus.LOCKED) == ["task-1"]
        assert ids(limit=10, status=TaskStatus.WAITING) == ["task-2", "task-3"]
        assert ids(limit=10, status=TaskStatus.WAITING, topic="charge") == ["task-3"]
        assert ids(limit=10, status=TaskStatus.COMPLETED) == []

    def test_topics_count_waiting_live_and_expired_locks_by_name_in_keyset_pages(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Topics with open tasks by name: waiting, live and expired locks, the oldest waiting."""
        offer_all(
            uow,
            task("c-1", lock_seconds=5),
            task("c-2", lock_seconds=600),
            task("c-3", created_at=NOW + timedelta(seconds=1)),
            task("c-4", created_at=NOW + timedelta(seconds=2)),
            task("s-1", topic="ship", created_at=NOW + timedelta(seconds=3)),
            task("d-1", topic="done"),
            task("x-1", tenant="t2", topic="alpha"),
        )
        claim_now(uow, limit=2)  # c-1 and c-2
        claim_now(uow, topics=("done",))
        with uow() as tx:
            (done,) = tx.tasks.page("t1", topic="done", limit=1)
            assert done.lock_token is not None
            tx.tasks.complete("t1", "d-1", lock_token=done.lock_token, output={}, now=NOW)
            tx.commit()
        later = NOW + timedelta(seconds=10)  # c-1's lock ran out, c-2's lasts
        with uow() as tx:
            found = tx.tasks.topics("t1", later, limit=10)
            assert [(q.topic, q.waiting, q.locked, q.expired) for q in found] == [
                ("charge", 2, 1, 1),
                ("ship", 1, 0, 0),
            ]
            assert [q.oldest_waiting_at for q in found] == [
                NOW + timedelta(seconds=1),
                NOW + timedelta(seconds=3),
            ]
            assert [q.topic for q in tx.tasks.topics("t1", later, limit=1)] == ["charge"]
            assert [q.topic for q in tx.tasks.topics("t1", later, limit=5, after="charge")] == [
                "ship"
            ]
            assert [q.topic for q in tx.tasks.topics("t2", later, limit=5)] == ["alpha"]
            assert tx.tasks.topics("t3", later, limit=5) == []

    @pytest.mark.spec("C15 console-run")
    def test_a_runs_tasks_are_listed_oldest_first_in_its_tenant_only(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Only that run's tasks of that tenant, the oldest first, then by id, up to the limit."""
        offer_all(
            uow,
            task("b", run_id="run-1", created_at=NOW + timedelta(seconds=1)),
            task("c", run_id="run-1", created_at=NOW),
            task("a", run_id="run-1", created_at=NOW + timedelta(seconds=1)),
            task("other-run", run_id="run-2"),
            task("other-tenant", run_id="run-1", tenant="t2"),
        )
        with uow() as tx:
            assert [t.task_id for t in tx.tasks.for_run("t1", "run-1", limit=10)] == [
                "c",
                "a",
                "b",
            ]
            assert [t.task_id for t in tx.tasks.for_run("t1", "run-1", limit=2)] == ["c", "a"]
            assert [t.task_id for t in tx.tasks.for_run("t2", "run-1", limit=10)] == [
                "other-tenant"
            ]
            assert tx.tasks.for_run("t1", "nope", limit=10) == []
