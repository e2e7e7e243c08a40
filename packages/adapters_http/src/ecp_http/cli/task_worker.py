"""``ecp worker``: run a Python function as an external-task worker over the HTTP API.

The worker claims tasks of its topics (long-polling), calls a function with a :class:`ClaimedTask`
for each, and completes the task with the returned object or fails it with the exception's text;
a thread heartbeats the claimed tasks at a third of their lock time. Delivery is at-least-once: a
worker that dies loses its lock, and another worker gets the task.
"""

import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import attrs
import httpx

from ecp_http.cli import api_client

MAX_BACKOFF_SECONDS = 10.0
MAX_ERROR_CHARS = 4000
JSON = {"Content-Type": "application/json"}
FATAL_CLAIM_STATUSES = frozenset({400, 401, 403, 404, 422})  # a setting to fix, not to wait out
logger = logging.getLogger("ecp.worker")


class WorkerRefused(Exception):
    """The worker cannot start or go on as configured; exit status 2, the message says why."""


class _Interrupted(BaseException):
    """A stop signal while idle: in a claim's long poll or a back-off pause."""


class _Abandoned(BaseException):
    """A second stop signal: leave the current task to expire and exit."""


@attrs.frozen(kw_only=True)
class ClaimedTask:
    """A task as the worker function sees it: the node's arguments and the run state.

    ``lock_token`` proves the claim (the worker completes with it when the function returns).
    """

    task_id: str
    run_id: str
    node_id: str
    attempt: int
    topic: str
    arguments: dict[str, Any]
    state: dict[str, Any]
    locked_until: datetime
    lock_token: str = attrs.field(repr=False)


TaskFunction = Callable[[ClaimedTask], object]
"""What ``ecp worker`` runs: a function of a :class:`ClaimedTask` that returns a dict."""


@attrs.frozen(kw_only=True)
class WorkerOptions:
    """How a worker claims: its id, topics, and the claim's limits (see ``ecp worker -h``)."""

    url: str
    topics: tuple[str, ...]
    worker_id: str
    lock_seconds: int | None = None
    wait_seconds: int = 20
    max_tasks: int = 1
    once: bool = False


def problem_text(response: httpx.Response) -> str:
    """An error answer in one line: status, problem code and detail."""
    return api_client.problem_text(response.status_code, response.text).split("\n", 1)[0]


def _json(value: object) -> str:
    """Decimals (money) and aware datetimes as strings; anything else is not JSON."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _task(item: dict[str, Any]) -> ClaimedTask:
    names = ("task_id", "run_id", "node_id", "attempt", "topic", "lock_token")
    return ClaimedTask(
        **{name: item[name] for name in names},
        arguments=item.get("arguments") or {},
        state=item.get("state") or {},
        locked_until=datetime.fromisoformat(item["locked_until"]),
    )


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
        self, options: WorkerOptions, function: TaskFunction, headers: Mapping[str, str]
    ) -> None:
        """Work for ``options`` with ``function``, sending ``headers`` on every request."""
        self._options = options
        self._function = function
        timeout = httpx.Timeout(10.0, read=options.wait_seconds + 30.0)
        self._client = httpx.Client(base_url=options.url, headers=dict(headers), timeout=timeout)
        self._beats = httpx.Client(base_url=options.url, headers=dict(headers), timeout=10.0)
        self._stopping = False
        self._idle = False  # claiming or pausing: a stop signal interrupts at once

    def run(self) -> int:
        """Work until a stop signal (or one claim with ``once``); the exit status."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._on_signal)
            signal.signal(signal.SIGINT, self._on_signal)
        logger.info("worker started", extra={"worker_id": self._options.worker_id})
        try:
            while not self._stopping:
                tasks = self._claim()
                if tasks is None:
                    break
                self._work(tasks)
                if self._options.once:
                    break
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
        body: dict[str, Any] = {
            "worker_id": self._options.worker_id,
            "topics": list(self._options.topics),
            "max_tasks": self._options.max_tasks,
            "wait_seconds": self._options.wait_seconds,
        }
        if self._options.lock_seconds is not None:
            body["lock_seconds"] = self._options.lock_seconds
        delay, self._idle = 0.5, True
        try:
            while not self._stopping:
                try:
                    response = self._client.post("/v1/tasks/claim", json=body)
                except httpx.TransportError as exc:
                    logger.warning("cannot reach %s: %s", self._options.url, exc)
                    delay = self._pause(delay)
                    continue
                if response.status_code == httpx.codes.OK:
                    return [_task(item) for item in response.json()["tasks"]]
                if response.status_code in FATAL_CLAIM_STATUSES:
                    raise WorkerRefused(f"the claim was refused: {problem_text(response)}")
                logger.warning("claim answered %s", problem_text(response))
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
                self._handle(task, heartbeat)
        finally:
            heartbeat.stop()

    def _handle(self, task: ClaimedTask, heartbeat: _Heartbeat) -> None:
        facts = {"task_id": task.task_id, "run_id": task.run_id, "attempt": task.attempt}
        facts["worker_id"] = self._options.worker_id
        logger.info("task claimed", extra={**facts, "topic": task.topic})
        try:
            body = self._completion(task)
        except Exception as exc:
            heartbeat.release(task.task_id)
            error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
            logger.warning("task failed", exc_info=True, extra={**facts, "error": error})
            self._settle(task, "fail", json.dumps({"lock_token": task.lock_token, "error": error}))
            return
        heartbeat.release(task.task_id)
        if self._settle(task, "complete", body):
            logger.info("task completed", extra=facts)

    def _completion(self, task: ClaimedTask) -> str:
        """The body of ``complete``: the function's output, which must be a JSON object."""
        output = self._function(task)
        if not isinstance(output, dict):
            raise TypeError(f"the function returned {type(output).__name__}, not a dict")
        return json.dumps({"lock_token": task.lock_token, "output": output}, default=_json)

    def _settle(self, task: ClaimedTask, verb: str, body: str) -> bool:
        """POST ``complete`` or ``fail`` until the server answers; whether it took it."""
        delay, facts = 0.5, {"task_id": task.task_id, "run_id": task.run_id}
        while True:
            try:
                response = self._client.post(
                    f"/v1/tasks/{task.task_id}/{verb}", content=body, headers=JSON
                )
            except httpx.TransportError as exc:
                logger.warning("cannot reach %s to %s: %s", self._options.url, verb, exc)
                delay = self._pause(delay)  # even when stopping: the outcome is worth sending
                continue
            if response.status_code == httpx.codes.OK:
                return True
            if response.status_code == httpx.codes.CONFLICT:
                logger.warning("lock lost: another worker has the task", extra=facts)
            else:
                logger.error("%s refused: %s", verb, problem_text(response), extra=facts)
            return False

    def heartbeat(self, task: ClaimedTask) -> bool:
        """Extend ``task``'s lock once; False when the lock is gone (stop beating for it)."""
        body: dict[str, Any] = {"lock_token": task.lock_token}
        if self._options.lock_seconds is not None:
            body["lock_seconds"] = self._options.lock_seconds
        try:
            response = self._beats.post(f"/v1/tasks/{task.task_id}/heartbeat", json=body)
        except httpx.TransportError as exc:
            logger.warning("heartbeat did not reach %s: %s", self._options.url, exc)
            return True
        if response.status_code == httpx.codes.OK:
            return True
        facts = {"task_id": task.task_id, "run_id": task.run_id}
        logger.warning("heartbeat refused: %s", problem_text(response), extra=facts)
        return False
