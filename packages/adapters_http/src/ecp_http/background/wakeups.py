"""Wake-ups across server processes: PostgreSQL notifications wired to the workers (ADR 0063).

One :class:`~ecp_postgres.notifications.NotificationListener` per server process: a run made
runnable wakes the run dispatcher, a run that waits or ends rings the ``Prefer: wait`` bell for
that run, a task that can be claimed rings the task bell for one waiting claim of its tenant that
takes its topic (ADR 0071), a queued webhook delivery hurries the delivery sweep. Every
connection of the listener wakes all of them once, since notifications sent while it was away
are lost. Polling stays as the fallback
(``ECP_DISPATCH_POLL_SECONDS``, ``ECP_WEBHOOK_POLL_SECONDS``, the long-poll interval). The memory
store has no listener: its only process wakes its workers directly.

While the listener is connected it sets ``TaskOffers.listening``: this process then leaves the
tasks it makes claimable to their notifications, so each task wakes one claim, and the
background work it announces stops polling (ADR 0099): a run that starts to wait for a timer
hurries the timer thread, and losing the listener makes every worker and sweep look at once.
"""

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge

from ecp_http.background.dispatch import Dispatcher
from ecp_http.background.timers import TIMER_SWEEP
from ecp_http.server.live_feed import LiveFeed
from ecp_http.server.long_poll import Bell
from ecp_http.server.task_offers import TaskOffers
from ecp_postgres.notifications import (
    CHANNELS,
    RUNS_MOVED,
    RUNS_RUNNABLE,
    TASKS_OFFERED,
    WEBHOOKS_DUE,
    NotificationListener,
    moved,
    offered,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

log = logging.getLogger("ecp_http.wakeups")

WAITING_TIMER = "WAITING_TIMER"
"""The stored status of a run waiting for its timer, as a moved notification names it."""

DELIVERY_SWEEP = "deliver_webhooks"
"""The name of the sweep a queued delivery hurries (see :func:`ecp_http.background.sweeps_of`)."""


class WakeupMetrics:
    """``ecp_notifications_received_total{channel}`` and ``ecp_notification_listener_up``."""

    def __init__(self, registry: "CollectorRegistry") -> None:
        """Register both families on ``registry`` (channels are fixed names, never tenant data)."""
        self.received = Counter(
            "ecp_notifications_received",
            "PostgreSQL notifications that woke this process, by channel (ADR 0063).",
            ["channel"],
            registry=registry,
        )
        self.listener_up = Gauge(
            "ecp_notification_listener_up",
            "1 while the notification listener is connected, else 0 (work is found by polling).",
            registry=registry,
        )
        for channel in CHANNELS:
            self.received.labels(channel)


def process_listener(
    url: str | None,
    *,
    dispatcher: Dispatcher,
    offers: TaskOffers,
    runs_moved: Bell,
    registry: "CollectorRegistry | None",
    live: LiveFeed | None = None,
    timers: Dispatcher | None = None,
) -> NotificationListener | None:
    """The server's listener on PostgreSQL at ``url``; None without one (memory, or turned off).

    ``registry`` gets the wake-up metrics; ``live`` hears the runs moved, for the console.
    """
    if url is None:
        return None
    metrics = None if registry is None else WakeupMetrics(registry)
    return wakeup_listener(
        url,
        dispatcher=dispatcher,
        runs_moved=runs_moved,
        offers=offers,
        metrics=metrics,
        live=live,
        timers=timers,
    )


def wakeup_listener(
    url: str,
    *,
    dispatcher: Dispatcher,
    runs_moved: Bell,
    offers: TaskOffers,
    metrics: WakeupMetrics | None = None,
    live: LiveFeed | None = None,
    timers: Dispatcher | None = None,
) -> NotificationListener:
    """The listener on ``url`` that wakes ``dispatcher`` and rings the bells (not started).

    ``timers`` (the timer thread) is hurried by runs that start to wait for a timer.

    ``offers.listening`` is set while it is connected: the offers of this process are rung from
    their notifications then, here.
    """

    def counted(channel: str) -> None:
        if metrics is not None:
            metrics.received.labels(channel).inc()

    def runnable(_: str) -> None:
        counted(RUNS_RUNNABLE)
        dispatcher.wake()

    hurry_timers = _timer_hurry(timers)

    def run_moved(payload: str) -> None:
        counted(RUNS_MOVED)
        run = moved(payload)
        log.debug(
            "run moved, by notification",
            extra={"run_id": run.run_id, "status": run.status, "tenant_id": run.tenant_id},
        )
        runs_moved.ring(run.run_id)
        hurry_timers(run.status)
        if live is not None and run.tenant_id is not None:  # approvals: the mover's process says
            live.run_moved(run.tenant_id, run.run_id, run.status)

    def task_offered(payload: str) -> None:
        counted(TASKS_OFFERED)
        task = offered(payload)
        if task is None:
            log.warning("task offer notification not understood", extra={"payload": payload})
            offers.bell.ring()
            return
        offers.bell.ring(task.tenant_id, topic=task.topic, one=True)

    def deliveries_due(_: str) -> None:
        counted(WEBHOOKS_DUE)
        dispatcher.hurry(DELIVERY_SWEEP)

    def everything() -> None:  # after a (re)connection: what was notified meanwhile is lost
        dispatcher.wake()
        dispatcher.hurry(DELIVERY_SWEEP)
        runs_moved.ring()
        offers.bell.ring()

    return NotificationListener(
        url,
        {
            RUNS_RUNNABLE: runnable,
            RUNS_MOVED: run_moved,
            TASKS_OFFERED: task_offered,
            WEBHOOKS_DUE: deliveries_due,
        },
        on_connect=everything,
        on_state=_connection_state(metrics, offers.listening, dispatcher, timers),
    )


def _timer_hurry(timers: Dispatcher | None) -> Callable[[str], None]:
    """What a moved notification's status does: hurry the timer thread for a run waiting on one."""

    def hurry(status: str) -> None:
        if timers is not None and status == WAITING_TIMER:
            timers.hurry(TIMER_SWEEP)

    return hurry


def _connection_state(
    metrics: WakeupMetrics | None, listening: threading.Event, *quiet: Dispatcher | None
) -> Callable[[bool], None]:
    """The listener's ``on_state`` hook: the ``up`` gauge and the ``listening`` event follow it.

    When it is lost, the ``quiet`` dispatchers look at once and poll again (ADR 0099).
    """

    def state(connected: bool) -> None:  # noqa: FBT001 - the listener's hook
        if metrics is not None:
            metrics.listener_up.set(1 if connected else 0)
        if connected:
            listening.set()
        elif listening.is_set():
            listening.clear()
            for dispatcher in quiet:
                if dispatcher is not None:
                    dispatcher.rouse()

    return state


__all__ = ["DELIVERY_SWEEP", "WakeupMetrics", "process_listener", "wakeup_listener"]
