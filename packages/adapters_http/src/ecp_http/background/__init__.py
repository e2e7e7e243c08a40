"""The server's background work: run dispatch and the periodic sweeps, and the decision scheduler.

Sweeps deliver due webhooks, escalate overdue approvals, purge expired data (when retention is
enabled), release external-task locks that ran out and settle connector test reservations a
dead process left behind (ADR 0050). A run that starts waiting for a task, and a lock released,
make tasks claimable (:class:`~ecp_http.server.task_offers.TaskOffers` rings the claims, ADR 0071); a
run that waits or ends rings the ``Prefer: wait`` bell for its id. Other processes' changes arrive by ``LISTEN/NOTIFY``
(:mod:`ecp_http.background.wakeups`, ADR 0063).
"""

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ecp_core.connectors.abandoned import SWEEP_BATCH
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL, WAITING
from ecp_core.runs.tasks.service import LOCK_SWEEP_SECONDS
from ecp_core.service import Ecp
from ecp_core.types import RunStatus
from ecp_http.background.backtest_worker import BacktestWorker
from ecp_http.background.dispatch import Dispatcher, Outage
from ecp_http.background.timers import TIMER_SWEEP, timer_thread
from ecp_http.background.transparency import log_thread
from ecp_http.background.wakeups import DELIVERY_SWEEP
from ecp_http.config.settings import Settings
from ecp_http.outbound.webhook_sender import HttpxSender
from ecp_http.server.live_feed import LiveFeed
from ecp_http.server.long_poll import Bell
from ecp_http.server.task_offers import TaskOffers

if TYPE_CHECKING:
    from ecp_http.server.observability.metrics import Metrics
    from ecp_http.server.observability.tracing import Tracing

DELIVERY_BATCHES = 20
"""At most this many batches of due deliveries per pass, so other sweeps get their turn."""

BACKTEST_POLL_SECONDS = 1.0
"""How often queued backtests are looked for (each pass runs one, off the request; ADR 0038)."""

ABANDONED_SWEEP_SECONDS = 30.0
"""How often held connector test reservations are checked for ones a dead process left."""

ABANDONED_BATCHES = 20
"""At most this many batches of abandoned reservations are settled per pass."""

SECRET_SWEEP_SECONDS = 60.0
"""How often webhook secrets whose rotation overlap ended are forgotten (ADR 0054)."""

LOCK_SWEEP = "expire_task_locks"
"""The sweep releasing task locks that ran out: quiet while no lock of this process may run out."""

QUIET_SECONDS = 30.0
"""While the notification listener is connected, the safety-net interval of what notifications
announce (ADR 0099): idle run workers, webhook deliveries, timers. The sweeps know their own
next due time (a delivery's retry, a timer) and wait for that when it is sooner."""

QUIET_CLAIM_SECONDS = 10.0
"""While the listener is connected, how often one idle run worker still claims (ADR 0099): the
safety net for a run that becomes claimable with no notification (backing off after a failed
dispatch, waiting for a concurrency slot) where no attempt of this process left it so (then the
workers poll at their own interval for ``LIVELY_SECONDS``). The other idle workers wait for a
call or :data:`QUIET_SECONDS`."""


def abandoned_reservations_sweep(ecp: Ecp, metrics: "Metrics | None") -> Callable[[], None]:
    """The sweep settling connector test reservations a dead process left (ADR 0050)."""

    def settle_abandoned_reservations() -> None:
        for _ in range(ABANDONED_BATCHES):
            settled = ecp.connector_reservations.settle(limit=SWEEP_BATCH)
            if metrics is not None and settled:
                metrics.connector_reservations_abandoned.inc(len(settled))
            if len(settled) < SWEEP_BATCH:
                return

    return settle_abandoned_reservations


def sweeps_of(
    ecp: Ecp, settings: Settings, offers: TaskOffers, metrics: "Metrics | None" = None
) -> list[tuple[str, Callable[[], object], float]]:
    """The periodic sweeps as (name, action, interval seconds); ``metrics`` counts what they do."""
    sender = HttpxSender(
        timeout_seconds=settings.webhook_timeout_seconds,
        allow_private=settings.webhook_allow_private_targets,
    )

    def deliver_webhooks() -> float | None:
        """Deliver what is due; after attempts, the seconds until the next one (a retry) is due."""
        attempted = 0
        for _ in range(DELIVERY_BATCHES):
            sent = ecp.webhooks.deliver_due(sender)
            attempted += sent
            if sent == 0:
                break
        else:
            return 0.0  # more are due: at once
        # An attempt that failed set its retry: a time no notification announces.
        return ecp.webhooks.seconds_to_next_due() if attempted else None

    def expire_task_locks() -> float | None:
        """Release the locks that ran out; every second while one of this process's may."""
        if ecp.tasks.expire_locks():
            offers.released()
        return LOCK_SWEEP_SECONDS if offers.locks.may_run_out() else None

    sweeps: list[tuple[str, Callable[[], object], float]] = [
        (DELIVERY_SWEEP, deliver_webhooks, settings.webhook_poll_seconds),
        (
            "escalate_overdue_approvals",
            ecp.approvals.escalate_overdue,
            settings.escalation_interval_seconds,
        ),
        (LOCK_SWEEP, expire_task_locks, LOCK_SWEEP_SECONDS),
        ("drop_expired_webhook_secrets", ecp.webhooks.drop_expired_secrets, SECRET_SWEEP_SECONDS),
        (
            "settle_abandoned_reservations",
            abandoned_reservations_sweep(ecp, metrics),
            ABANDONED_SWEEP_SECONDS,
        ),
    ]
    if ecp.backtests.enabled:  # a sweep that reads nothing would say the database is back
        worker = BacktestWorker(ecp.backtests.claim, ecp.backtests.run)
        sweeps.append(("run_backtests", worker, BACKTEST_POLL_SECONDS))
    if settings.retention_enabled:
        sweeps.append(("retention_purge", ecp.retention.sweep, settings.retention_poll_seconds))
    return sweeps


def background_work(
    ecp: Ecp,
    settings: Settings,
    tracing: "Tracing | None",
    *,
    offers: TaskOffers,
    runs_moved: Bell,
    metrics: "Metrics | None" = None,
    live: LiveFeed | None = None,
    appended: threading.Event | None = None,
) -> tuple[Dispatcher, Dispatcher, Dispatcher | None, Dispatcher | None]:
    """The run dispatcher (with the sweeps), the timer thread, the scheduler and the log thread.

    The scheduler is None when disabled, the log thread when checkpoints cannot be signed.

    ``offers`` hears of the tasks made claimable here, ``runs_moved`` is rung when a run waits or
    ends; ``metrics`` counts what the sweeps settle; ``live`` hears those runs for the console;
    ``appended`` is set after commits that appended audit records (the log thread's cue).
    """

    def advanced(run: Run) -> None:
        if run.status is RunStatus.WAITING_TASK:
            offers.offered(run.tenant_id)  # the run holds no topic: every claim of the tenant
        if run.status is RunStatus.WAITING_TIMER:
            timers.hurry(TIMER_SWEEP)  # its due time may come before the quiet timer thread looks
        if run.status in TERMINAL or run.status in WAITING:
            runs_moved.ring(run.run_id, run)  # the news its Prefer: wait answers from
            if live is not None:
                live.run_moved(run.tenant_id, run.run_id, run.status, run.pending_approval_ids)

    outage = Outage()  # one outage, logged once, whichever thread finds it
    dispatcher = Dispatcher(
        ecp.runs,
        workers=settings.dispatch_workers,
        poll_seconds=settings.dispatch_poll_seconds,
        sweeps=sweeps_of(ecp, settings, offers, metrics),
        tracing=tracing,
        outage=outage,
        on_advanced=advanced,
        quiet=offers.listening,
        quiet_seconds={
            "workers": QUIET_CLAIM_SECONDS,
            "other workers": QUIET_SECONDS,
            DELIVERY_SWEEP: QUIET_SECONDS,
            LOCK_SWEEP: QUIET_SECONDS,
        },
    )
    offers.locks.taken = lambda: dispatcher.hurry(LOCK_SWEEP)
    scheduler = (
        Dispatcher(
            ecp.runs,
            workers=0,
            poll_seconds=settings.scheduler_interval_seconds,
            sweeps=[
                ("decision_schedules", ecp.decisions.run_due, settings.scheduler_interval_seconds)
            ],
            outage=outage,
        )
        if settings.scheduler_enabled
        else None
    )
    timers = timer_thread(
        ecp,
        settings.timer_poll_seconds,
        dispatcher,
        outage=outage,
        metrics=metrics,
        quiet=offers.listening,
        quiet_seconds=QUIET_SECONDS,
    )
    log = log_thread(
        ecp,
        settings.log_checkpoint_seconds,
        outage=outage,
        metrics=metrics,
        witnesses=settings.log_witnesses,
        quiet=offers.listening,
        appended=appended,
        quiet_seconds=QUIET_SECONDS,
    )
    return dispatcher, timers, scheduler, log


__all__ = [
    "ABANDONED_BATCHES",
    "ABANDONED_SWEEP_SECONDS",
    "DELIVERY_BATCHES",
    "QUIET_CLAIM_SECONDS",
    "QUIET_SECONDS",
    "abandoned_reservations_sweep",
    "background_work",
    "sweeps_of",
]
