"""The run-dispatch worker: threads that advance runnable runs until told to stop.

Claims use ``FOR UPDATE SKIP LOCKED``, so several server processes can share one database.
Stopping lets each thread finish the attempt it is in (drain) before it exits. One more thread
runs periodic sweeps (escalating overdue approvals) at their own interval.
"""

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ecp_core.runs.service import RunService

if TYPE_CHECKING:
    from ecp_core.runs.model import Run
    from ecp_http.tracing import Tracing

log = logging.getLogger("ecp_http.dispatch")


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
    ) -> None:
        """Prepare, not start. ``sweeps`` are (name, action, interval seconds) run periodically.

        With ``tracing``, each attempt that claims a run is a span (ADR 0018).
        """
        self._tracing = tracing
        self._sweeps = tuple(sweeps)
        self._runs = runs
        self._workers = workers
        self._poll = poll_seconds
        self._stop = threading.Event()
        self._work = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def alive(self) -> bool:
        """Whether every worker thread is running."""
        return bool(self._threads) and all(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        """Start the worker threads."""
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._loop, name=f"ecp-dispatch-{index}", daemon=True)
            for index in range(self._workers)
        ]
        if self._sweeps:
            self._threads.append(
                threading.Thread(target=self._sweep_loop, name="ecp-sweeps", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    def wake(self) -> None:
        """Tell idle workers there may be work now."""
        self._work.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking work, let attempts in flight finish, and join the threads."""
        self._stop.set()
        self._work.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def _loop(self) -> None:
        while not self._stop.is_set():
            tracing = self._tracing
            advanced = self._advance() if tracing is None else tracing.attempt(self._advance)
            if advanced is not None:
                log.info(
                    "run dispatched",
                    extra={
                        "run_id": advanced.run_id,
                        "tenant_id": advanced.tenant_id,
                        "status": advanced.public_status.value,
                    },
                )
            if advanced is None:
                self._work.wait(self._poll)
                self._work.clear()

    def _advance(self) -> "Run | None":
        try:
            return self._runs.advance_next()
        except Exception:  # a failing run must not kill the worker
            log.exception("run dispatch failed")
            return None

    def _sweep_loop(self) -> None:
        due = dict.fromkeys([name for name, _, _ in self._sweeps], 0.0)
        while not self._stop.is_set():
            now = time.monotonic()
            for name, action, interval in self._sweeps:
                if now >= due[name]:
                    due[name] = now + interval
                    try:
                        action()
                    except Exception:  # one failing sweep must not stop the others
                        log.exception("sweep failed", extra={"sweep": name})
            self._stop.wait(min(interval for _, _, interval in self._sweeps))
