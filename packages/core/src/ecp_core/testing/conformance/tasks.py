"""External tasks on every store: offers, claims under expiring locks, completions, failures.

The rules (ADR 0030, :mod:`ecp_core.tasks.rules`): a claim takes a tenant's waiting or
lock-expired tasks of the asked topics, oldest first, each under a new lock token; only the
current token heartbeats, completes or fails; a completion is applied once, and repeating it with
the same token is a no-op; a token whose task another claim took gets ``lock_lost``.
"""

import itertools
from datetime import datetime, timedelta
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ecp_core.errors import Conflict, LockLost, NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.tasks.model import Task, TaskStatus
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW

LATER = NOW + timedelta(seconds=61)
"""Past the default lock time of a claim at NOW."""


def task(
    task_id: str,
    *,
    tenant: str = "t1",
    topic: str = "charge",
    created_at: datetime = NOW,
    **changes: Any,
) -> Task:
    """A waiting task of ``tenant`` on ``topic``; ``changes`` override any other field."""
    offered = Task(
        task_id=task_id,
        tenant_id=tenant,
        run_id=f"run-{task_id}",
        node_id="pay",
        topic=topic,
        arguments={"amount": "12.50", "nested": [1, {"k": None}]},
        state={"order": {"id": 7}},
        created_at=created_at,
        updated_at=created_at,
    )
    return attrs.evolve(offered, **changes)


def _claim(
    uow: UnitOfWorkFactory,
    *,
    now: datetime = NOW,
    worker: str = "w1",
    topics: tuple[str, ...] = ("charge",),
    tenant: str = "t1",
    lock_seconds: int | None = None,
    limit: int = 10,
) -> list[Task]:
    """Claim and commit."""
    with uow() as tx:
        claimed = tx.tasks.claim(
            tenant, topics, worker_id=worker, now=now, lock_seconds=lock_seconds, limit=limit
        )
        tx.commit()
    return claimed


def _offer(uow: UnitOfWorkFactory, *tasks: Task) -> None:
    with uow() as tx:
        for offered in tasks:
            tx.tasks.offer(offered)
        tx.commit()


@pytest.mark.spec("C10 external-tasks")
class TaskRepositoryConformance(StoreSuite):
    """External tasks: offers, claims, heartbeats, completions, failures, listings."""

    def test_an_offered_task_keeps_every_field_and_belongs_to_its_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An offered task keeps every field and belongs to its tenant."""
        full = task("task-1", max_attempts=5, lock_seconds=120)
        _offer(uow, full)
        with uow() as tx:
            assert tx.tasks.get("t1", "task-1") == full
            assert tx.tasks.get("t2", "task-1") is None
            assert tx.tasks.get("t1", "nope") is None
            with pytest.raises(Conflict):
                tx.tasks.offer(task("task-1", tenant="t2"))

    def test_a_claim_takes_the_oldest_of_its_tenant_and_topics_up_to_the_limit(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A claim takes the oldest of its tenant's tasks of its topics, up to the limit."""
        _offer(
            uow,
            task("b", created_at=NOW),
            task("a", created_at=NOW + timedelta(seconds=1)),
            task("c", created_at=NOW),
            task("other-topic", topic="ship"),
            task("other-tenant", tenant="t2"),
        )
        first = _claim(uow, limit=2)
        assert [t.task_id for t in first] == ["b", "c"]
        assert [t.task_id for t in _claim(uow, worker="w2")] == ["a"]
        assert _claim(uow) == []
        assert [t.task_id for t in _claim(uow, topics=("ship", "charge"))] == ["other-topic"]
        assert [t.task_id for t in _claim(uow, tenant="t2")] == ["other-tenant"]
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
        _offer(uow, task("task-1", lock_seconds=5), task("task-2", lock_seconds=5))
        short, own = _claim(uow, lock_seconds=300, limit=1) + _claim(uow, limit=1)
        assert short.locked_until == NOW + timedelta(seconds=300)
        assert own.locked_until == NOW + timedelta(seconds=5)

    def test_an_expired_lock_is_claimable_again_under_a_new_token(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An expired lock is claimable again under a new token (at-least-once)."""
        _offer(uow, task("task-1"))
        (first,) = _claim(uow)
        assert _claim(uow, now=NOW + timedelta(seconds=59), worker="w2") == []
        (second,) = _claim(uow, now=NOW + timedelta(seconds=60), worker="w2")
        assert (second.worker_id, second.attempt) == ("w2", 2)
        assert second.lock_token != first.lock_token

    def test_a_heartbeat_extends_the_current_lock_only(self, uow: UnitOfWorkFactory) -> None:
        """A heartbeat extends the current lock only."""
        _offer(uow, task("task-1"))
        (first,) = _claim(uow)
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
        assert _claim(uow, now=LATER, worker="w2") == []
        assert len(_claim(uow, now=NOW + timedelta(seconds=80), worker="w2")) == 1
        with uow() as tx, pytest.raises(LockLost):
            tx.tasks.heartbeat("t1", "task-1", lock_token=token, now=LATER, lock_seconds=None)

    def test_a_completion_applies_once_and_again_is_a_no_op(self, uow: UnitOfWorkFactory) -> None:
        """A completion applies once; the same completion again changes nothing."""
        _offer(uow, task("task-1"))
        (claimed,) = _claim(uow)
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
        assert _claim(uow, now=LATER + timedelta(days=1)) == []

    def test_a_stale_token_after_another_claim_has_lost_its_lock(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A stale token after another claim has lost its lock."""
        _offer(uow, task("task-1"))
        (first,) = _claim(uow)
        (second,) = _claim(uow, now=LATER, worker="w2")
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
        _offer(uow, task("task-1"))
        (claimed,) = _claim(uow)
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
        _offer(uow, task("task-1", max_attempts=2))
        (first,) = _claim(uow)
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
        assert _claim(uow, now=NOW + timedelta(seconds=29)) == []
        (second,) = _claim(uow, now=NOW + timedelta(seconds=30))
        assert (second.attempt, second.not_before) == (2, None)
        assert second.lock_token is not None
        with uow() as tx:
            failed, applied = tx.tasks.fail(
                "t1", "task-1", lock_token=second.lock_token, error="again", now=LATER
            )
            tx.commit()
        assert applied
        assert (failed.status, failed.error) == (TaskStatus.FAILED, "again")
        assert _claim(uow, now=LATER + timedelta(days=1)) == []

    def test_a_claim_rolled_back_leaves_the_task_waiting(self, uow: UnitOfWorkFactory) -> None:
        """A claim rolled back leaves the task waiting."""
        offered = task("task-1")
        _offer(uow, offered)
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
        _offer(
            uow,
            task("task-3"),
            task("task-1"),
            task("task-2", topic="ship"),
            task("task-4", tenant="t2"),
        )
        _claim(uow, limit=1)  # task-1 and task-3 share created_at: task-1 goes first

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


# The property: any interleaving keeps each task completed at most once and loses none.

WORKERS = ("w1", "w2", "w3")
LOCK_SECONDS = 30

steps = st.lists(
    st.one_of(
        st.tuples(st.just("offer")),
        st.tuples(st.just("claim"), st.sampled_from(WORKERS), st.integers(1, 3)),
        st.tuples(st.just("heartbeat"), st.integers(0, 30)),
        st.tuples(st.just("complete"), st.integers(0, 30)),
        st.tuples(st.just("fail"), st.integers(0, 30), st.sampled_from([0, 0, 20])),
        st.tuples(st.just("advance"), st.sampled_from([1, 15, LOCK_SECONDS, 45])),
    ),
    min_size=1,
    max_size=60 if THOROUGH else 30,
)
"""Steps: offer a task, claim, heartbeat/complete/fail with the n-th token handed out (current
or stale, repeats allowed), or let the clock run (past lock expiry, sometimes)."""

_examples = itertools.count()


class TaskQueueProperties(ExampleStoreSuite):
    """Any interleaving of offers, claims, heartbeats, completions, failures and time."""

    @pytest.mark.spec("C10 external-tasks")
    @settings(
        deadline=None,
        max_examples=200 if THOROUGH else 40,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(script=steps)
    @example(  # a re-claim after expiry, then both tokens complete, fail and beat, twice
        script=[
            ("offer",),
            ("claim", "w1", 1),
            ("advance", 45),
            ("claim", "w2", 1),
            *[(verb, pick) for verb in ("heartbeat", "complete") for pick in (0, 1, 1, 0)],
            ("fail", 0, 0),
            ("fail", 1, 0),
            ("advance", 45),
            ("claim", "w3", 2),
        ]
    )
    @example(  # a failure, its retry, and the last attempt failing for good
        script=[
            ("offer",),
            ("claim", "w1", 1),
            ("fail", 0, 20),
            ("fail", 0, 20),
            ("claim", "w2", 1),
            ("advance", 30),
            ("claim", "w2", 1),
            ("complete", 0),
            *[("fail", 1, 0), ("advance", 1), ("claim", "w3", 1)] * 2,
            ("complete", 2),
        ]
    )
    def test_each_task_is_completed_at_most_once_and_none_is_lost(
        self, open_store: StoreOpener, script: list[tuple[Any, ...]]
    ) -> None:
        """Each task completes at most once, is never handed out after, and is never lost."""
        tenant = f"p{next(_examples):05d}"  # a new tenant per example: the store may be reused
        with open_store() as uow:
            _Interleaving(uow, tenant).run(script)


class _Interleaving:
    """Runs one script against the store and checks every answer against what was seen."""

    def __init__(self, uow: UnitOfWorkFactory, tenant: str) -> None:
        self.uow, self.tenant, self.now = uow, tenant, NOW
        self.offered: list[str] = []
        self.tokens: list[tuple[str, str]] = []  # every (task id, token) handed out, in order
        self.current: dict[str, str] = {}  # task id -> the latest token handed out
        self.held_until: dict[str, datetime] = {}  # task id -> its lock, while locked
        self.completed: dict[str, tuple[str, dict[str, Any]]] = {}  # task id -> (token, output)
        self.failed: set[str] = set()

    def run(self, script: list[tuple[Any, ...]]) -> None:
        for step in script:
            getattr(self, step[0])(*step[1:])
        self.check_none_lost()

    def offer(self) -> None:
        task_id = f"{self.tenant}-task-{len(self.offered):03d}"
        created = self.now
        with self.uow() as tx:
            tx.tasks.offer(
                task(task_id, tenant=self.tenant, created_at=created, lock_seconds=LOCK_SECONDS)
            )
            tx.commit()
        self.offered.append(task_id)

    def claim(self, worker: str, limit: int) -> None:
        with self.uow() as tx:
            claimed = tx.tasks.claim(
                self.tenant,
                ["charge"],
                worker_id=worker,
                now=self.now,
                lock_seconds=None,
                limit=limit,
            )
            tx.commit()
        assert len(claimed) <= limit
        for got in claimed:
            assert got.task_id not in self.completed, "a completed task was handed out again"
            assert got.task_id not in self.failed, "a failed task was handed out again"
            held = self.held_until.get(got.task_id)
            assert held is None or held <= self.now, "a held lock was handed out again"
            assert got.lock_token is not None
            assert got.lock_token not in {token for _, token in self.tokens}
            self.tokens.append((got.task_id, got.lock_token))
            self.current[got.task_id] = got.lock_token
            assert got.locked_until is not None
            self.held_until[got.task_id] = got.locked_until

    def _token(self, pick: int) -> tuple[str, str] | None:
        return self.tokens[pick % len(self.tokens)] if self.tokens else None

    def heartbeat(self, pick: int) -> None:
        picked = self._token(pick)
        if picked is None:
            return
        task_id, token = picked
        with self.uow() as tx:
            try:
                beat = tx.tasks.heartbeat(
                    self.tenant, task_id, lock_token=token, now=self.now, lock_seconds=None
                )
            except LockLost:
                assert self.current[task_id] != token or task_id not in self.held_until
                return
            tx.commit()
        assert self.current[task_id] == token, "a stale token extended a lock"
        assert beat.locked_until is not None
        self.held_until[task_id] = beat.locked_until

    def complete(self, pick: int) -> None:
        picked = self._token(pick)
        if picked is None:
            return
        task_id, token = picked
        output = {"by": token, "at": pick}
        with self.uow() as tx:
            try:
                done, applied = tx.tasks.complete(
                    self.tenant, task_id, lock_token=token, output=output, now=self.now
                )
            except LockLost:
                assert self.completed.get(task_id, ("", {}))[0] != token
                assert self.current[task_id] != token or task_id not in self.held_until
                return
            tx.commit()
        assert done.status is TaskStatus.COMPLETED
        if applied:
            assert task_id not in self.completed, "a task was completed twice"
            assert self.current[task_id] == token, "a stale token completed a task"
            self.completed[task_id] = (token, output)
            self.held_until.pop(task_id, None)
        else:
            assert self.completed[task_id][0] == token
        assert done.output == self.completed[task_id][1]

    def fail(self, pick: int, retry_after: int) -> None:
        picked = self._token(pick)
        if picked is None:
            return
        task_id, token = picked
        with self.uow() as tx:
            try:
                after, applied = tx.tasks.fail(
                    self.tenant,
                    task_id,
                    lock_token=token,
                    error=f"e{pick}",
                    now=self.now,
                    retry_after_seconds=retry_after,
                )
            except LockLost:
                assert self.current[task_id] != token or task_id not in self.held_until
                return
            tx.commit()
        assert task_id not in self.completed, "a completed task failed"
        assert self.current[task_id] == token, "a stale token failed a task"
        if applied:
            self.held_until.pop(task_id, None)
            if after.status is TaskStatus.FAILED:
                self.failed.add(task_id)
        assert after.status in (TaskStatus.WAITING, TaskStatus.FAILED)

    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)

    def check_none_lost(self) -> None:
        with self.uow() as tx:
            stored = {t.task_id: t for t in tx.tasks.page(self.tenant, limit=1000)}
        assert sorted(stored) == self.offered, "an offered task was lost"
        for task_id, stored_task in stored.items():
            assert stored_task.status in set(TaskStatus)
            if task_id in self.completed:
                assert stored_task.status is TaskStatus.COMPLETED
                assert stored_task.output == self.completed[task_id][1]
            else:
                assert stored_task.status is not TaskStatus.COMPLETED
            assert (stored_task.status is TaskStatus.FAILED) == (task_id in self.failed)
