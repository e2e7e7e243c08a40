"""The task queue's property: any interleaving keeps each task completed at most once, losing none."""

import itertools
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ecp_core.errors import LockLost
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.tasks.model import TaskStatus
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener
from ecp_core.testing.conformance.tasks.samples import task
from ecp_core.testing.samples import NOW

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
        for claim in claimed:
            got = claim.task
            if claim.lost is not None:  # its lock ran out: the lost attempt is the last token's
                assert claim.lost.lock_token == self.current[got.task_id]
                assert claim.lost.status is TaskStatus.WAITING
                assert got.attempt == claim.lost.attempt + 1
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
