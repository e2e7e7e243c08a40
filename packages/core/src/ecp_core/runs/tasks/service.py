"""Use cases of external tasks: workers claim, heartbeat, complete and fail; locks expire.

Each call is one unit of work. A completion applied now (the queue says so, exactly once per
task) records the attempt and moves the run on in the same transaction, with the run's next
attempts that change nothing outside it; a failed attempt, or a lock that ran out, records the
attempt and, at the last one, ends the run with ``task_failed``
(:mod:`ecp_core.runs.tasks.steps`). A lock that ran out is released by the claim that takes its
task again (which records the lost attempt first) or by the periodic sweep, whichever holds the
task first, so each lost attempt is recorded once, naming the worker that held it.
"""

import logging
from collections.abc import Callable

from ecp_core.canonical import canonical_json
from ecp_core.errors import NotFound
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.pages import check_limit, decode_cursor, next_page
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock
from ecp_core.registry.service import require_graph
from ecp_core.runs.run.effects import Step
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.moves import StepApplier
from ecp_core.runs.tasks.model import (
    Claim,
    NextClaim,
    Task,
    TaskClaimRequest,
    TaskCompleteRequest,
    TaskFailRequest,
    TaskHeartbeatRequest,
    TaskStatus,
    TopicQueue,
)
from ecp_core.runs.tasks.steps import TaskSteps
from ecp_core.types import RunStatus

log = logging.getLogger("ecp_core.runs.tasks")

EXPIRY_BATCH = 100
"""How many expired locks one statement releases; a sweep repeats until none is left."""

TASKS_CURSOR = "tasks"
TOPICS_CURSOR = "task-topics"

LOCK_SWEEP_SECONDS = 1.0
"""How often a server releases the locks that ran out, in every tenant."""


def _facts(task: Task) -> dict[str, object]:
    """The ids a task's log lines carry."""
    return {
        "task_id": task.task_id,
        "run_id": task.run_id,
        "node_id": task.node_id,
        "tenant_id": task.tenant_id,
        "topic": task.topic,
        "attempt": task.attempt,
        "worker_id": task.worker_id,
    }


def _claimed(claims: list[Claim]) -> list[Task]:
    """The tasks ``claims`` took, each logged (after the lost attempt it was taken with)."""
    for claim in claims:
        if claim.lost is not None:
            _log_expired(claim.lost)
        log.info("task claimed", extra=_facts(claim.task))
    return [claim.task for claim in claims]


def _log_expired(task: Task) -> None:
    """The line of a lock that ran out (released by the sweep or by the claim that took it)."""
    log.info("task lock expired", extra={**_facts(task), "status": task.status.value})


class TaskWork:
    """What workers and operators do with external tasks, and what it does to the runs."""

    def __init__(
        self,
        uow: Callable[[], RunsUnit],
        clock: Clock,
        steps: TaskSteps,
        lifecycle: StepApplier,
        continue_run: Callable[[RunsUnit, Run], Run] | None = None,
    ) -> None:
        """Wire the use cases; ``steps`` decides what a task's end does to its run.

        ``continue_run`` goes on with a run its task's completion moved on, in the completion's
        unit of work (``RunService.continue_in`` without effects); None leaves it to the
        dispatcher.
        """
        self._uow = uow
        self._clock = clock
        self._steps = steps
        self._lifecycle = lifecycle
        self._continue_run = continue_run

    def claim(self, tenant_id: str, request: TaskClaimRequest) -> list[Task]:
        """Lock up to ``max_tasks`` claimable tasks of the topics for the worker (maybe none).

        A task taken after its lock ran out has that lost attempt recorded in the same unit.
        """
        with self._uow() as uow:
            claims = self._claim_in(uow, tenant_id, request)
            uow.commit()
        return _claimed(claims)

    def heartbeat(self, tenant_id: str, task_id: str, request: TaskHeartbeatRequest) -> Task:
        """Extend the worker's lock (LockLost when another claim took the task)."""
        with self._uow() as uow:
            task = uow.tasks.heartbeat(
                tenant_id,
                task_id,
                lock_token=request.lock_token,
                now=self._clock.now(),
                lock_seconds=request.lock_seconds,
            )
            uow.commit()
        return task

    def complete(self, tenant_id: str, task_id: str, request: TaskCompleteRequest) -> Task:
        """Complete the task; the first completion moves its run on, a repeat changes nothing."""
        return self.complete_and_claim(tenant_id, task_id, request)[0]

    def complete_and_claim(
        self, tenant_id: str, task_id: str, request: TaskCompleteRequest
    ) -> tuple[Task, list[Task]]:
        """Complete the task, and claim the worker's next tasks when ``claim_next`` asks.

        The claim joins the completion's unit of work, so a worker that asks for its next task
        this way needs one request and one transaction per task instead of two. Only a completion
        applied now claims: a repeat changes nothing, and a refused one raises before it.
        """
        canonical_json(request.output)
        claims: list[Claim] = []
        with self._uow() as uow:
            task, applied = uow.tasks.complete(
                tenant_id,
                task_id,
                lock_token=request.lock_token,
                output=request.output,
                now=self._clock.now(),
            )
            if applied:
                self._apply(uow, task, self._steps.completed, go_on=True)
                if request.claim_next is not None:
                    claims = self._claim_in(uow, tenant_id, request.claim_next)
            uow.commit()
        if applied:
            log.info("task completed", extra=_facts(task))
        return task, _claimed(claims)

    def fail(self, tenant_id: str, task_id: str, request: TaskFailRequest) -> Task:
        """Fail the worker's attempt; the last attempt's failure ends the run (``task_failed``)."""
        with self._uow() as uow:
            task, applied = uow.tasks.fail(
                tenant_id,
                task_id,
                lock_token=request.lock_token,
                error=request.error,
                now=self._clock.now(),
                retry_after_seconds=request.retry_after_seconds,
            )
            if applied:
                self._apply(uow, task, self._steps.attempt_failed)
            uow.commit()
        if applied:
            log.info("task attempt failed", extra={**_facts(task), "status": task.status.value})
        return task

    def expire_locks(self) -> int:
        """Release every lock that ran out, in every tenant (the periodic sweep); how many."""
        with self._uow() as uow:
            expired = self._expire(uow)
            uow.commit()
        for task in expired:
            _log_expired(task)
        return len(expired)

    def get(self, tenant_id: str, task_id: str) -> Task:
        """One task of the tenant; NotFound otherwise."""
        with self._uow() as uow:
            task = uow.tasks.get(tenant_id, task_id)
        if task is None:
            raise NotFound(f"task {task_id} not found")
        return task

    def for_run(self, tenant_id: str, run_id: str, *, limit: int = 25) -> list[Task]:
        """Up to ``limit`` of a run's tasks, the oldest first (the console's run page)."""
        check_limit(limit)
        with self._uow() as uow:
            return uow.tasks.for_run(tenant_id, run_id, limit=limit)

    def page(
        self,
        tenant_id: str,
        *,
        status: TaskStatus | None = None,
        topic: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[Task], str | None]:
        """A page of the tenant's tasks by id, of one status and topic when given; next cursor."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor(TASKS_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            found = uow.tasks.page(
                tenant_id, status=status, topic=topic, limit=limit + 1, after=after
            )
        return next_page(found, limit, TASKS_CURSOR, lambda task: (task.task_id,))

    def topics(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[TopicQueue], str | None]:
        """A page of the tenant's topics with open tasks, by name, with their counts now."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor(TOPICS_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            found = uow.tasks.topics(tenant_id, self._clock.now(), limit=limit + 1, after=after)
        return next_page(found, limit, TOPICS_CURSOR, lambda queue: (queue.topic,))

    # -- what a task's end does to its run ---------------------------------------------------

    def _expire(self, uow: RunsUnit) -> list[Task]:
        """Release every lock that ran out and record each lost attempt."""
        expired: list[Task] = []
        while True:
            batch = uow.tasks.expire(self._clock.now(), limit=EXPIRY_BATCH)
            for task in batch:
                self._apply(uow, task, self._steps.attempt_failed)
            expired.extend(batch)
            if len(batch) < EXPIRY_BATCH:
                return expired

    def _claim_in(self, uow: RunsUnit, tenant_id: str, terms: NextClaim) -> list[Claim]:
        """Claim in ``uow`` what ``terms`` ask for, recording each lost attempt taken with it."""
        claims = uow.tasks.claim(
            tenant_id,
            terms.topics,
            worker_id=terms.worker_id,
            now=self._clock.now(),
            lock_seconds=terms.lock_seconds,
            limit=terms.max_tasks,
        )
        for claim in claims:
            if claim.lost is not None:
                self._apply(uow, claim.lost, self._steps.attempt_failed)
        return claims

    def _apply(
        self,
        uow: RunsUnit,
        task: Task,
        step: Callable[[Run, GraphDefinition, Task], Step],
        *,
        go_on: bool = False,
    ) -> None:
        """Apply ``step(run, graph, task)`` to the run waiting for ``task``, if it still waits.

        With ``go_on`` (and ``continue_run`` wired) the run's next attempts that change nothing
        outside it join the same unit of work; an action with effects is the dispatcher's.
        """
        run = uow.runs.lock(task.tenant_id, task.run_id)
        if (
            run is None
            or run.status is not RunStatus.WAITING_TASK
            or run.next_node_id != task.node_id
        ):
            log.warning("task ended but its run no longer waits for it", extra=_facts(task))
            return
        graph = require_graph(uow, run.tenant_id, run.graph_version_ref)
        run = self._lifecycle.apply(uow, step(run, graph, task))
        if go_on and self._continue_run is not None:
            run = self._continue_run(uow, run)
        uow.runs.save(run)


__all__ = ["LOCK_SWEEP_SECONDS", "TaskWork"]
