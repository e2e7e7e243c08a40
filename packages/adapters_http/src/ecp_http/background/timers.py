"""The timer thread: wakes the runs whose wait node's time came (ADR 0078).

A thread of its own, so a slow sweep (a webhook receiver that takes its time) never makes a run
late. It wakes the due runs, batch after batch, earliest first, then sleeps until the earliest
due time it knows of, or ``ECP_TIMER_POLL_SECONDS`` at most (a timer another process set may be
sooner than the one it knew); several server processes share them (a run one process is waking is skipped by the others). Each
woken run is logged (``run woke`` with its ids and how late it woke), counted, and handed to the
run workers: this process's at once, other processes' by the runnable notification its commit
sends.
"""

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ecp_core.runs.engine.timers import WAKE_BATCH
from ecp_core.service import Ecp
from ecp_http.background.dispatch import Dispatcher, Outage

if TYPE_CHECKING:
    from ecp_http.server.observability.metrics import Metrics

log = logging.getLogger("ecp_http.timers")

WAKE_BATCHES = 50
"""At most this many batches of due runs per pass (then the thread looks again at once)."""

SOONEST_SECONDS = 0.02
"""The shortest sleep between two passes that found work left to another process."""

TIMER_SWEEP = "wake_timers"
"""The name of the timer thread's one sweep."""


def timer_sweep(
    ecp: Ecp, dispatcher: Dispatcher, metrics: "Metrics | None" = None
) -> Callable[[], float | None]:
    """The sweep that wakes due runs and tells ``dispatcher`` of each; ``metrics`` counts them."""

    def wake_timers() -> float | None:
        """Wake what is due; the seconds until the next known due time (None: none waits)."""
        for _ in range(WAKE_BATCHES):
            woken = ecp.runs.wake_timers(WAKE_BATCH)
            for wake in woken:
                run = wake.run
                log.info(
                    "run woke",
                    extra={
                        "run_id": run.run_id,
                        "tenant_id": run.tenant_id,
                        "late_seconds": round(wake.late_seconds, 3),
                    },
                )
                dispatcher.wake()
                if metrics is not None:
                    metrics.timer_lateness.observe(wake.late_seconds)
            if len(woken) < WAKE_BATCH:
                break
        else:
            return 0.0  # more are due: at once
        seconds = ecp.runs.seconds_to_next_timer()
        # Due but not taken: another process holds it and wakes it; look again a little later.
        return None if seconds is None else max(SOONEST_SECONDS, seconds)

    return wake_timers


def timer_thread(
    ecp: Ecp,
    poll_seconds: float,
    dispatcher: Dispatcher,
    *,
    outage: Outage,
    metrics: "Metrics | None" = None,
    quiet: threading.Event | None = None,
    quiet_seconds: float | None = None,
) -> Dispatcher:
    """The timer thread (not started): one sweep every ``poll_seconds``, beside ``dispatcher``.

    While ``quiet`` is set (the listener is connected), every ``quiet_seconds`` instead: a run
    that starts to wait for a timer hurries it (this process's runs directly, other processes'
    by their notification), and between those it sleeps until the earliest due time it knows.
    """
    return Dispatcher(
        ecp.runs,
        workers=0,
        poll_seconds=poll_seconds,
        sweeps=[(TIMER_SWEEP, timer_sweep(ecp, dispatcher, metrics), poll_seconds)],
        outage=outage,
        quiet=quiet,
        quiet_seconds=None if quiet_seconds is None else {TIMER_SWEEP: quiet_seconds},
    )


__all__ = ["SOONEST_SECONDS", "TIMER_SWEEP", "WAKE_BATCHES", "timer_sweep", "timer_thread"]
