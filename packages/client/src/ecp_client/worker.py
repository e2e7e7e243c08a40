"""The task-worker loop: run a Python function for every task of some topics (``ecp worker``).

The worker claims tasks of its topics (long-polling), calls a function with each
:class:`~ecp_client.models.ClaimedTask`, and completes the task with the returned dict or fails
it with the exception's text; a thread heartbeats the claimed tasks at a third of their lock
time. The completion of a batch's last task claims the next batch in the same request, so a
busy topic costs one request per task; when none is ready the worker claims again and waits.
SIGTERM or SIGINT stops claiming and exits after the current task (a second one leaves it to
expire). Delivery is at-least-once: a worker that dies loses its lock, and another worker gets
the task.
"""

import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import attrs

from ecp_client._convert import dumps
from ecp_client._core import RetryPolicy
from ecp_client._sync_client import Client
from ecp_client.errors import ConnectionFailed, EcpError
from ecp_client.models import ClaimedTask

__all__ = ["ClaimedTask", "TaskFunction", "TaskWorker", "WorkerOptions", "WorkerRefused"]

MAX_BACKOFF_SECONDS = 10.0
MAX_ERROR_CHARS = 4000
FATAL_CLAIM_STATUSES = frozenset({400, 401, 403, 404, 422})  # a setting to fix, not to wait out
HEARTBEAT_RETRY = RetryPolicy(attempts=3, max_wait=2.0, deadline=10.0)
logger = logging.getLogger("ecp.worker")

TaskFunction = Callable[[ClaimedTask], object]
"""What a worker runs: a function of a :class:`ClaimedTask` that returns a dict."""


class WorkerRefused(Exception):
    """The worker cannot start or go on as configured; the message says why."""


class _Interrupted(BaseException):
    """A stop signal while idle: in a claim's long poll or a back-off pause."""


class _Abandoned(BaseException):
    """A second stop signal: leave the current task to expire and exit."""


@attrs.frozen(kw_only=True)
class WorkerOptions:
    """How a worker claims: the service, its id, topics, and the claim's limits."""

    url: str
    topics: tuple[str, ...]
    worker_id: str
    lock_seconds: int | None = None
    wait_seconds: int = 20
    max_tasks: int = 1
    once: bool = False


class _Heartbeat(threading.Thread):
    """Extends the locks of one claimed batch until each task is released."""

    def __init__(self, worker: "TaskWorker", tasks: list[ClaimedTask], seconds: float) -> None:
        super().__init__(name="ecp-worker-heartbeat", daemon=True)
        self._worker = worker
        self._held = {task.task_id: task for task in tasks}
        self._guard = threading.Lock()
        self._done = threading.Event()
        self._interval = max(seconds / 3, 0.2)

    def release(self, task_id: str) -> None:
        with self._guard:
            self._held.pop(task_id, None)

    def stop(self) -> None:
        self._done.set()

    def run(self) -> None:
        while not self._done.wait(self._interval):
            with self._guard:
                held = list(self._held.values())
            for task in held:
                if not self._worker.heartbeat(task):
                    self.release(task.task_id)


class TaskWorker:
    """Claims, runs and settles tasks until stopped (or after one claim with ``once``)."""

    def __init__(
        self,
        options: WorkerOptions,
        function: TaskFunction,
        *,
        api_key: str | None = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Work for ``options`` with ``function``, as a project API key or a bearer token."""
        self._options = options
        self._function = function
        self._client = Client(
            options.url, api_key=api_key, token=token, headers=headers, timeout=10.0
        )
        self._beats = Client(
            options.url,
            api_key=api_key,
            token=token,
            headers=headers,
            timeout=10.0,
            retry=HEARTBEAT_RETRY,
        )
        self._stopping = False
        self._idle = False  # claiming or pausing: a stop signal interrupts at once
        self._next: list[ClaimedTask] = []  # claimed by the last completion

    def run(self) -> int:
        """Work until a stop signal (or one claim with ``once``); the exit status."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._on_signal)
            signal.signal(signal.SIGINT, self._on_signal)
        logger.info("worker started", extra={"worker_id": self._options.worker_id})
        try:
            while not self._stopping:
                tasks, self._next = self._next or self._claim(), []
                if tasks is None:
                    break
                self._work(tasks)
                if self._options.once:
                    break
            if self._next:
                logger.info("stopping: %d claimed tasks left to expire", len(self._next))
        except _Abandoned:
            logger.warning("stopped again: the current task is left to expire")
        except _Interrupted:
            pass
        finally:
            self._client.close()
            self._beats.close()
        logger.info("worker stopped", extra={"worker_id": self._options.worker_id})
        return 0

    def stop(self) -> None:
        """Claim no more (from another thread); the current task is finished first."""
        self._stopping = True

    def _on_signal(self, signum: int, _: object) -> None:
        # Only flags and exceptions here: a lock taken in a signal handler can deadlock.
        if self._idle:
            self._stopping = True
            raise _Interrupted
        if self._stopping:
            raise _Abandoned
        logger.info("stopping after the current task", extra={"signal": signum})
        self._stopping = True

    @staticmethod
    def _pause(delay: float) -> float:
        """Sleep ``delay``; the next, doubled delay (at most ``MAX_BACKOFF_SECONDS``)."""
        time.sleep(delay)
        return min(delay * 2, MAX_BACKOFF_SECONDS)

    def _claim(self) -> list[ClaimedTask] | None:
        """The next batch (possibly empty), or None when stopped."""
        options = self._options
        delay, self._idle = 0.5, True
        try:
            while not self._stopping:
                try:
                    return self._client.tasks.claim(
                        options.worker_id,
                        options.topics,
                        max_tasks=options.max_tasks,
                        wait_seconds=options.wait_seconds,
                        lock_seconds=options.lock_seconds,
                    )
                except ConnectionFailed as exc:
                    logger.warning("cannot reach %s: %s", options.url, exc)
                except EcpError as exc:
                    if exc.status in FATAL_CLAIM_STATUSES:
                        raise WorkerRefused(f"the claim was refused: {exc}") from None
                    logger.warning("claim answered %s", exc)
                delay = self._pause(delay)
        except _Interrupted:
            pass  # a claimed batch lost here is claimed again once its locks expire
        finally:
            self._idle = False
        return None

    def _work(self, tasks: list[ClaimedTask]) -> None:
        """Run the batch in order while one thread keeps all of its locks."""
        if not tasks:
            return
        seconds = self._options.lock_seconds or min(
            (task.locked_until - datetime.now(UTC)).total_seconds() for task in tasks
        )
        heartbeat = _Heartbeat(self, tasks, seconds)
        heartbeat.start()
        try:
            for index, task in enumerate(tasks):
                if self._stopping:
                    logger.info("stopping: %d claimed tasks left to expire", len(tasks) - index)
                    return
                self._handle(task, heartbeat, last=index == len(tasks) - 1)
        finally:
            heartbeat.stop()

    def _handle(self, task: ClaimedTask, heartbeat: _Heartbeat, *, last: bool) -> None:
        """Run ``task`` and settle it; the batch's ``last`` completion claims the next batch."""
        facts: dict[str, object] = {"task_id": task.task_id, "run_id": task.run_id}
        facts |= {"attempt": task.attempt, "worker_id": self._options.worker_id}
        logger.info("task claimed", extra={**facts, "topic": task.topic})
        try:
            output = self._output(task)
        except Exception as exc:
            heartbeat.release(task.task_id)
            error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
            logger.warning("task failed", exc_info=True, extra={**facts, "error": error})
            self._settle(task, "fail", lambda: self._client.tasks.fail(task, error))
            return
        heartbeat.release(task.task_id)
        if self._settle(task, "complete", lambda: self._complete(task, output, last=last)):
            logger.info("task completed", extra=facts)

    def _complete(self, task: ClaimedTask, output: dict[str, object], *, last: bool) -> None:
        """Complete ``task``; after a batch's last task, claim the next batch in the same call.

        A worker that goes on asks the completion for its next tasks (``claim_next``), so a busy
        topic costs one request per task; none ready, and the next loop claims (and waits).
        """
        options = self._options
        claim_next = None
        if last and not (options.once or self._stopping):
            claim_next = {
                "worker_id": options.worker_id,
                "topics": list(options.topics),
                "max_tasks": options.max_tasks,
            }
            if options.lock_seconds is not None:
                claim_next["lock_seconds"] = options.lock_seconds
        answer = self._client.tasks.complete(task, output, claim_next=claim_next)
        self._next = list(answer.next_tasks)

    def _output(self, task: ClaimedTask) -> dict[str, object]:
        """The function's output, which must be a JSON object (Decimals and times as text)."""
        output = self._function(task)
        if not isinstance(output, dict):
            raise TypeError(f"the function returned {type(output).__name__}, not a dict")
        dumps(output)  # not JSON: a TypeError here fails the task
        return output

    def _settle(self, task: ClaimedTask, verb: str, send: Callable[[], object]) -> bool:
        """``complete`` or ``fail`` until the server answers; whether it took it."""
        delay, facts = 0.5, {"task_id": task.task_id, "run_id": task.run_id}
        while True:
            try:
                send()
            except ConnectionFailed as exc:
                logger.warning("cannot reach %s to %s: %s", self._options.url, verb, exc)
                delay = self._pause(delay)  # even when stopping: the outcome is worth sending
                continue
            except EcpError as exc:
                if exc.status == 409:  # noqa: PLR2004 - Conflict
                    logger.warning("lock lost: another worker has the task", extra=facts)
                else:
                    logger.error("%s refused: %s", verb, exc, extra=facts)  # noqa: TRY400
                return False
            return True

    def heartbeat(self, task: ClaimedTask) -> bool:
        """Extend ``task``'s lock once; False when the lock is gone (stop beating for it)."""
        try:
            self._beats.tasks.heartbeat(task, lock_seconds=self._options.lock_seconds)
        except ConnectionFailed as exc:
            logger.warning("heartbeat did not reach %s: %s", self._options.url, exc)
            return True
        except EcpError as exc:
            facts = {"task_id": task.task_id, "run_id": task.run_id}
            logger.warning("heartbeat refused: %s", exc, extra=facts)
            return False
        return True
