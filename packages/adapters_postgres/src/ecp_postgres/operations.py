"""Operational figures for monitoring: queue depths and ages, read in one cheap query.

Across tenants by design: these feed ``/metrics`` gauges, which never carry tenant ids.
"""

from datetime import datetime

import attrs

from ecp_postgres.database import PostgresStore

# Each count uses a partial index (ecp_runs_runnable_by_tenant, ecp_webhook_deliveries_due,
# ecp_tasks_open, ecp_runs_timers_due: its first entry is the earliest due time); the statuses
# are literals so the planner can match them.
_FIGURES = """
SELECT
  (SELECT count(*) FROM ecp_runs WHERE status IN ('PENDING', 'RUNNING')) AS runnable,
  (SELECT min(created_at) FROM ecp_runs WHERE status IN ('PENDING', 'RUNNING')
     AND status = 'PENDING') AS oldest_pending,
  (SELECT count(*) FROM ecp_webhook_deliveries WHERE status = 'pending') AS outbox,
  (SELECT count(*) FROM ecp_tasks WHERE status IN ('waiting', 'locked')
     AND status = 'waiting') AS tasks_waiting,
  (SELECT count(*) FROM ecp_runs WHERE status = 'WAITING_TIMER') AS timers_waiting,
  (SELECT min(wait_until) FROM ecp_runs WHERE status = 'WAITING_TIMER') AS earliest_due,
  now() AS now
"""


@attrs.frozen(kw_only=True)
class QueueFigures:
    """How much background work waits, across every tenant."""

    runnable_runs: int
    oldest_pending_seconds: float
    """Age of the oldest run not yet started; 0 when none waits."""
    webhook_outbox: int
    tasks_waiting: int
    """External tasks waiting for a worker (not those a worker holds)."""
    timers_waiting: int
    """Runs waiting at a wait node (ADR 0078)."""
    overdue_timer_seconds: float
    """How long ago the earliest waiting timer came due; 0 when none is due (timers keep up)."""


def queue_figures(store: PostgresStore) -> QueueFigures:
    """Read the figures now (one round trip on a pooled connection)."""
    with store.pool.connection() as conn:
        row = conn.execute(_FIGURES).fetchone()
    assert row is not None  # noqa: S101 - a SELECT without FROM always answers one row
    age = _seconds_since(row["oldest_pending"], row["now"])
    return QueueFigures(
        runnable_runs=int(row["runnable"]),
        oldest_pending_seconds=age,
        webhook_outbox=int(row["outbox"]),
        tasks_waiting=int(row["tasks_waiting"]),
        timers_waiting=int(row["timers_waiting"]),
        overdue_timer_seconds=_seconds_since(row["earliest_due"], row["now"]),
    )


def _seconds_since(moment: datetime | None, now: datetime) -> float:
    """Seconds from ``moment`` to ``now``; 0 when there is none or it is still ahead."""
    return 0.0 if moment is None else max(0.0, (now - moment).total_seconds())
