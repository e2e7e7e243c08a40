"""The run-dispatch worker: threads that advance runnable runs until told to stop.

Claims use ``FOR UPDATE SKIP LOCKED``, so several server processes can share one database.
Stopping lets each thread finish the attempt it is in (drain) before it exits. One more thread
runs periodic sweeps (escalating overdue approvals) at their own interval. Idle workers wait
``poll_seconds`` unless :meth:`Dispatcher.wake` is called (by this process, or by the
``LISTEN/NOTIFY`` listener when another process made a run runnable; ADR 0063), and
:meth:`Dispatcher.hurry` runs a sweep at once (webhook deliveries just queued). While the listener
is connected, what notifications announce is not polled for (ADR 0099), and a start handed over
by :meth:`Dispatcher.start_here` is made by the next free worker before it claims.

While the database is away (:class:`~ecp_core.errors.DatabaseUnavailable`), the threads log it
once through a shared :class:`Outage` (``database unavailable``, then ``database available
again``) and back off, up to :data:`OUTAGE_BACKOFF_CAP_SECONDS`, instead of a traceback per poll.
"""

import collections
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

from ecp_core.errors import DatabaseUnavailable
from ecp_core.runs.engine.commit_groups import MAX_GROUP
from ecp_core.runs.engine.service import RunService

if TYPE_CHECKING:
    from ecp_core.runs.engine.starts import PreparedStart
    from ecp_core.runs.run.model import Run
    from ecp_http.server.observability.tracing import Tracing

log = logging.getLogger("ecp_http.dispatch")

OUTAGE_BACKOFF_SECONDS = 0.5
"""A thread's first wait after the database was found away; it doubles with each failure."""
OUTAGE_BACKOFF_CAP_SECONDS = 4.0

LIVELY_SECONDS = 30.0
"""How long after an attempt left its run claimable idle workers poll at their own interval,
even while quiet: a run backing off or waiting for a concurrency slot comes due unannounced."""
"""The longest a thread waits between two tries while the database is away."""


def outage_backoff(failures: int) -> float:
    """Seconds to wait after the ``failures``-th failure in a row (from 1): doubling, capped."""
    return min(OUTAGE_BACKOFF_CAP_SECONDS, OUTAGE_BACKOFF_SECONDS * 2.0 ** min(failures - 1, 16))


class Outage:
    """Whether background work finds the database away; each change is logged once.

    Shared by every thread of the server's dispatchers, so one outage is one pair of lines.
    """

    def __init__(self) -> None:
        """Start as available."""
        self._lock = threading.Lock()
        self._since: float | None = None

    def failed(self, error: DatabaseUnavailable) -> None:
        """A try found the database away: log ``database unavailable`` if it was not already."""
        with self._lock:
            if self._since is not None:
                return
            self._since = time.monotonic()
        log.warning("database unavailable", extra={"error": error.detail})

    def succeeded(self) -> None:
        """A try reached the database: log ``database available again`` after an outage."""
        if self._since is None:  # the usual case, without taking the lock
            return
        with self._lock:
            since, self._since = self._since, None
        if since is not None:
            seconds = round(time.monotonic() - since, 3)
            log.info("database available again", extra={"outage_seconds": seconds})


class StartsStopped(Exception):
    """The workers stopped before taking a start handed to them: its caller starts it itself."""


class _IdleWorkers:
    """Where workers that found nothing wait: each wake-up calls one of them, not all (ADR 0065).

    A call made while no worker waits is remembered once: the next worker about to wait looks
    again instead, since the claim it just made may have missed that work. Every notification
    and every started run used to wake every idle worker, and all but one claimed nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._waiting = 0
        self._calls = 0
        self._missed = False

    def call(self) -> None:
        """Wake one waiting worker that no call has woken yet; else remember it once."""
        with self._lock:
            if self._calls < self._waiting:
                self._calls += 1
                self._lock.notify()
            else:
                self._missed = True

    def call_all(self) -> None:
        """Wake every waiting worker (to stop)."""
        with self._lock:
            self._calls = self._waiting
            self._lock.notify_all()

    def wait(self, seconds: float, stop: threading.Event) -> None:
        """Wait for a call, at most ``seconds``; at once when a call was missed or on ``stop``."""
        with self._lock:
            if self._missed or stop.is_set():
                self._missed = False
                return
            self._waiting += 1
            try:
                self._lock.wait_for(lambda: self._calls > 0 or stop.is_set(), seconds)
                self._calls = max(0, self._calls - 1)
            finally:
                self._waiting -= 1


class Dispatcher:
    """``workers`` threads, each advancing one claimed run at a time."""

    def __init__(
        self,
        runs: RunService,
        *,
        workers: int,
        poll_seconds: float,
        sweeps: Sequence[tuple[str, Callable[[], object], float]] = (),
        tracing: "Tracing | None" = None,
        outage: Outage | None = None,
        on_advanced: "Callable[[Run], object] | None" = None,
        quiet: threading.Event | None = None,
        quiet_seconds: Mapping[str, float] | None = None,
    ) -> None:
        """Prepare, not start. ``sweeps`` are (name, action, interval seconds) run periodically.

        While ``quiet`` is set (the notification listener is connected, ADR 0099), what
        notifications announce is not polled for: the first idle worker looks again only after
        ``quiet_seconds["workers"]``, the others after ``quiet_seconds["other workers"]``, and
        each sweep named in ``quiet_seconds`` runs at that interval instead of its own (a safety
        net), unless hurried or an action answers sooner.

        An action that returns a float is run again after at most that many seconds (work it
        knows to come sooner than its interval).

        ``on_advanced`` hears of each run after an attempt (it must not raise).

        With ``tracing``, each attempt that claims a run is a span (ADR 0018). ``outage`` is
        shared with the server's other dispatchers (one of its own by default).
        """
        self._tracing = tracing
        self._on_advanced = on_advanced
        self._outage = outage or Outage()
        self._sweeps = tuple(sweeps)
        self._runs = runs
        self._workers = workers
        self._poll = poll_seconds
        self._quiet = quiet
        self._quiet_seconds = dict(quiet_seconds or {})
        self._lively_until = 0.0
        self._stop = threading.Event()
        self._idle = _IdleWorkers()
        self._sweep_wake = threading.Event()
        self._starts: collections.deque[tuple[PreparedStart, Future[tuple[Run, bool]]]] = (
            collections.deque()
        )
        self._hurried: set[str] = set()
        self._threads: list[threading.Thread] = []

    @property
    def alive(self) -> bool:
        """Whether every worker thread is running."""
        return bool(self._threads) and all(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        """Start the worker threads."""
        self._stop.clear()
        self._threads = [
            threading.Thread(
                target=self._loop, args=(index,), name=f"ecp-dispatch-{index}", daemon=True
            )
            for index in range(self._workers)
        ]
        if self._sweeps:
            self._threads.append(
                threading.Thread(target=self._sweep_loop, name="ecp-sweeps", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    def wake(self, *, announced: bool = False) -> None:
        """Tell one idle worker there may be work now (a busy one looks when it is done).

        ``announced``: the work's commit sent a runnable notification, which wakes a worker
        while the listener is connected (quiet); only without one is a worker called here.
        """
        if announced and self._quiet is not None and self._quiet.is_set():
            return
        self._idle.call()

    def start_here(self, start: "PreparedStart") -> "Future[tuple[Run, bool]] | None":
        """Have a worker start a run with its first attempts (ADR 0099).

        The next worker free takes it before it claims, with every other start waiting (up to
        :data:`MAX_GROUP`) when starts share commits: their runs' creations and first attempts
        are one transaction, made by the run-dispatch worker (ADR 0106). The future holds the
        run and whether it was created, or the start's error; None when no worker runs (the
        caller starts it itself).
        """
        if not self.alive or self._stop.is_set():
            return None
        future: Future[tuple[Run, bool]] = Future()
        self._starts.append((start, future))
        self._idle.call()
        if self._stop.is_set():  # stopping meanwhile: no worker may take it
            self._fail_starts()
        return future

    def rouse(self) -> None:
        """Every idle worker claims and every sweep runs now (the listener was lost)."""
        self._idle.call_all()
        self._sweep_wake.set()
        self._hurried.update(name for name, _, _ in self._sweeps)

    def hurry(self, sweep: str) -> None:
        """Run the sweep named ``sweep`` now instead of at its next interval (any thread)."""
        self._hurried.add(sweep)
        self._sweep_wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking work, let attempts in flight finish, and join the threads."""
        self._stop.set()
        self._idle.call_all()
        self._sweep_wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        self._fail_starts()

    def _loop(self, index: int) -> None:
        # While quiet, only the first worker still claims at its quiet interval.
        idle_as = "workers" if index == 0 else "other workers"
        failures = 0
        while not self._stop.is_set():
            started = self._start_waiting()
            if started is False and not self._starts:  # it waits or ended: nothing to claim
                self._idle.wait(self._interval(idle_as, self._poll), self._stop)
            if started is not None:
                continue
            tracing = self._tracing
            try:
                advanced = self._advance() if tracing is None else tracing.attempt(self._advance)
            except DatabaseUnavailable as exc:
                failures += 1
                self._outage.failed(exc)
                self._stop.wait(outage_backoff(failures))
                continue
            failures = 0
            self._outage.succeeded()
            if advanced is not None and self._on_advanced is not None:
                self._on_advanced(advanced)
            if advanced is not None:
                log.info(
                    "run dispatched",
                    extra={
                        "run_id": advanced.run_id,
                        "tenant_id": advanced.tenant_id,
                        "status": advanced.public_status.value,
                    },
                )
            if advanced is not None and advanced.dispatchable:
                # Left claimable (a backoff, an admission under a limit): it may come due with
                # no notification, so idle workers poll at their own interval for a while.
                self._lively_until = time.monotonic() + LIVELY_SECONDS
            if advanced is None and not self._starts:  # calls for starts may have merged
                lively = time.monotonic() < self._lively_until
                idle = self._poll if lively else self._interval(idle_as, self._poll)
                self._idle.wait(idle, self._stop)

    def _start_waiting(self) -> bool | None:
        """Make the starts handed over by :meth:`start_here` that wait, together.

        None when none waits; else whether a run may still be claimed (one goes on, or a start
        failed and a claim looks as usual).
        """
        if not self._starts:
            return None
        taken: list[tuple[PreparedStart, Future[tuple[Run, bool]]]] = []
        most = 1 if self._runs.start_group is None else MAX_GROUP  # alone, each is answered first
        while len(taken) < most:
            try:
                start, future = self._starts.popleft()
            except IndexError:
                break
            if future.set_running_or_notify_cancel():
                taken.append((start, future))
        if not taken:
            return None
        try:
            outcomes = self._runs.starts.start_together([start for start, _ in taken])
        except Exception as exc:  # noqa: BLE001 - each caller answers it as its own start's error
            outcomes = [exc] * len(taken)
        claimable = False
        for (_, future), outcome in zip(taken, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
                claimable = True
                continue
            future.set_result(outcome)
            claimable = self._started(*outcome) or claimable
        return claimable

    def _started(self, run: "Run", created: bool) -> bool:  # noqa: FBT001 - a start's outcome
        """Tell of a run a worker started; whether it may still be claimed."""
        if self._on_advanced is not None:
            self._on_advanced(run)
        log.info(
            "run dispatched",
            extra={
                "run_id": run.run_id,
                "tenant_id": run.tenant_id,
                "status": run.public_status.value,
                "started": created,
            },
        )
        return run.dispatchable

    def _fail_starts(self) -> None:
        """Tell the callers of starts no worker will take that they must start them themselves."""
        while True:
            try:
                _, future = self._starts.popleft()
            except IndexError:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(StartsStopped())

    def _advance(self) -> "Run | None":
        try:
            return self._runs.advance_next()
        except DatabaseUnavailable:
            raise  # the loop logs the outage once and backs off
        except Exception:  # a failing run must not kill the worker
            log.exception("run dispatch failed")
            return None

    def _interval(self, name: str, interval: float) -> float:
        """``interval``, or the longer quiet one of ``name`` while notifications tell the news."""
        quiet = self._quiet_seconds.get(name)
        if quiet is None or self._quiet is None or not self._quiet.is_set():
            return interval
        return max(interval, quiet)

    def _sweep_loop(self) -> None:
        due = dict.fromkeys([name for name, _, _ in self._sweeps], 0.0)
        failures = dict.fromkeys(due, 0)
        while not self._stop.is_set():
            self._sweep_wake.clear()
            hurried = self._take_hurried()
            now = time.monotonic()
            for name, action, interval in self._sweeps:
                if now >= due[name] or name in hurried:
                    due[name] = now + self._interval(name, interval)
                    try:
                        sooner = action()
                    except DatabaseUnavailable as exc:
                        failures[name] += 1
                        self._outage.failed(exc)
                        backoff = outage_backoff(failures[name])
                        due[name] = time.monotonic() + max(interval, backoff)
                        continue
                    except Exception:  # one failing sweep must not stop the others
                        log.exception("sweep failed", extra={"sweep": name})
                    else:
                        self._outage.succeeded()
                        if isinstance(sooner, float):  # it knows when it has work next
                            due[name] = min(due[name], time.monotonic() + max(0.0, sooner))
                    failures[name] = 0
            self._sweep_wake.wait(max(0.0, min(due.values()) - time.monotonic()))

    def _take_hurried(self) -> set[str]:
        taken = set()
        while self._hurried:
            try:
                taken.add(self._hurried.pop())
            except KeyError:  # emptied by another thread meanwhile
                break
        return taken
