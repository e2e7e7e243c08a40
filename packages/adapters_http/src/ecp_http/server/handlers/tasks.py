"""External tasks: the worker API (claim with long-poll, heartbeat, complete, fail) and the list.

A claim with ``wait_seconds`` that finds nothing returns a :class:`~ecp_http.server.long_poll.Poll`, so
the wait happens on the event loop (ADR 0031); it hears the rings for its tenant's tasks of its
topics only, and a task offered wakes one such claim (ADR 0071).
Every change a worker makes rings the bell or wakes the run workers: a completion moves its run
on, a failed attempt that may be retried at once makes the task claimable for its tenant.
"""

import time

from ecp_core.permissions import Permission
from ecp_core.runs.tasks.model import (
    ClaimedTask,
    Task,
    TaskClaimRequest,
    TaskClaimResponse,
    TaskCompleteRequest,
    TaskCompletion,
    TaskFailRequest,
    TaskHeartbeatRequest,
    TaskListResponse,
    TaskLockResponse,
    TaskStatus,
    TaskSummary,
)
from ecp_http.server.long_poll import Poll
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.models import TaskListQuery

TAG = "tasks"
LOCK_LOST = (
    "409 `lock_lost` when the token's lock expired and another claim took the task (or the lock"
    " ran out and the task was released)."
)


def claim_tasks(call: Call, services: Services) -> TaskClaimResponse | Poll:
    """Lock up to ``max_tasks`` tasks of the topics; with ``wait_seconds``, wait for one.

    The wait is at most ``ECP_MAX_WAIT_SECONDS``, like every request that waits. Only a task of
    its topics offered to the caller's tenant wakes it, and each such task wakes one waiting
    claim (or an unkeyed ring: locks released, a reconnection): other offers cost it no claim.
    """
    request: TaskClaimRequest = call.body
    tenant = call.tenant

    def claim() -> TaskClaimResponse | None:
        claimed = services.ecp.tasks.claim(tenant, request)
        if not claimed:
            return None
        _watch_locks(services, claimed)
        return TaskClaimResponse(tasks=tuple(ClaimedTask.of(task) for task in claimed))

    found = claim()
    seconds = min(request.wait_seconds, services.settings.max_wait_seconds)
    if found is not None or seconds <= 0:
        return found or TaskClaimResponse(tasks=())
    return Poll(
        again=claim,
        at_deadline=lambda: TaskClaimResponse(tasks=()),
        deadline=time.monotonic() + seconds,
        bell=services.task_offers.bell,
        key=tenant,
        topics=frozenset(request.topics),
    )


def heartbeat_task(call: Call, services: Services) -> TaskLockResponse:
    """Extend the lock the token holds."""
    task = services.ecp.tasks.heartbeat(call.tenant, call.path["task_id"], call.body)
    assert task.locked_until is not None  # noqa: S101 - a heartbeat keeps the task locked
    services.task_offers.locks.locked(task.locked_until)
    return TaskLockResponse(task_id=task.task_id, locked_until=task.locked_until)


def _watch_locks(services: Services, claimed: list[Task]) -> None:
    """Have the lock sweep wake when the locks of the ``claimed`` tasks run out."""
    for task in claimed:
        if task.locked_until is not None:  # a claimed task is locked
            services.task_offers.locks.locked(task.locked_until)


def complete_task(call: Call, services: Services) -> TaskCompletion:
    """Complete the task (a repeat is answered the same); its run moves on.

    With ``claim_next`` the answer also carries the worker's next tasks, claimed in the same
    transaction (never waiting: an empty list sends the worker back to the claim route).
    """
    task, claimed = services.ecp.tasks.complete_and_claim(
        call.tenant, call.path["task_id"], call.body
    )
    services.background.wake(announced=True)  # a run left runnable notifies a worker
    _watch_locks(services, claimed)
    return TaskCompletion.completed(task, claimed)


def fail_task(call: Call, services: Services) -> TaskSummary:
    """Fail the attempt: the task waits for another claim, or fails its run at the last one."""
    request: TaskFailRequest = call.body
    task = services.ecp.tasks.fail(call.tenant, call.path["task_id"], request)
    if task.status is TaskStatus.WAITING and request.retry_after_seconds == 0:
        services.task_offers.offered(call.tenant, task.topic)  # a later retry is polled for
    return TaskSummary.of(task)


def list_tasks(call: Call, services: Services) -> TaskListResponse:
    """A page of the tenant's tasks by task id, filtered by status and topic."""
    query: TaskListQuery = call.params
    found, cursor = services.ecp.tasks.page(
        call.tenant, status=query.status, topic=query.topic, limit=query.limit, cursor=query.cursor
    )
    return TaskListResponse(tasks=tuple(TaskSummary.of(t) for t in found), next_cursor=cursor)


def get_task(call: Call, services: Services) -> TaskSummary:
    """One task of the tenant."""
    return TaskSummary.of(services.ecp.tasks.get(call.tenant, call.path["task_id"]))


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/tasks/claim",
        handler=claim_tasks,
        operation_id="tasks_claim",
        tag=TAG,
        summary=(
            "Claim tasks of the topics for a worker; with wait_seconds, long-poll until one is"
            " offered (an empty list when none was)"
        ),
        permission=Permission.TASK_WORK,
        body=TaskClaimRequest,
        response=TaskClaimResponse,
    ),
    Operation(
        method="POST",
        path="/v1/tasks/{task_id}/heartbeat",
        handler=heartbeat_task,
        operation_id="tasks_heartbeat",
        tag=TAG,
        summary=f"Extend a claimed task's lock. {LOCK_LOST}",
        permission=Permission.TASK_WORK,
        body=TaskHeartbeatRequest,
        response=TaskLockResponse,
        extra_statuses=(409,),
    ),
    Operation(
        method="POST",
        path="/v1/tasks/{task_id}/complete",
        handler=complete_task,
        operation_id="tasks_complete",
        tag=TAG,
        summary=(
            "Complete a claimed task: its output joins the run state and the run moves on; the"
            " same call again answers 200 and changes nothing. With claim_next, the worker's"
            " next tasks are claimed in the same transaction and answered in next_tasks (never"
            f" waiting). {LOCK_LOST}"
        ),
        permission=Permission.TASK_WORK,
        body=TaskCompleteRequest,
        response=TaskCompletion,
        extra_statuses=(409,),
    ),
    Operation(
        method="POST",
        path="/v1/tasks/{task_id}/fail",
        handler=fail_task,
        operation_id="tasks_fail",
        tag=TAG,
        summary=(
            "Fail a claimed task's attempt: it is offered again after retry_after_seconds, and"
            f" after max_attempts the run ends failed with reason task_failed. {LOCK_LOST}"
        ),
        permission=Permission.TASK_WORK,
        body=TaskFailRequest,
        response=TaskSummary,
        extra_statuses=(409,),
    ),
    Operation(
        method="GET",
        path="/v1/tasks",
        handler=list_tasks,
        operation_id="tasks_list",
        tag=TAG,
        summary="List the tenant's external tasks by task id, filtered by status and topic",
        permission=Permission.TASK_READ,
        response=TaskListResponse,
        query=TaskListQuery,
    ),
    Operation(
        method="GET",
        path="/v1/tasks/{task_id}",
        handler=get_task,
        operation_id="tasks_get",
        tag=TAG,
        summary="Read one external task",
        permission=Permission.TASK_READ,
        response=TaskSummary,
    ),
]
