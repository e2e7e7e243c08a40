"""Waking the runs whose timer came due (ADR 0078).

A sweep of the server calls :meth:`TimerWakes.wake_due` every fraction of a second: it takes the
runs waiting on a timer that is due, earliest first, and each one's wait node goes on (its wake is
one audit record), leaving the run RUNNING for the dispatchers. Runs another process is waking are
skipped, so several server processes share the work.
"""

from collections.abc import Callable
from datetime import datetime

import attrs

from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock
from ecp_core.registry.service import require_graph
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.run.model import Run
from ecp_core.runs.timers.steps import TimerSteps
from ecp_core.types import RunStatus

WAKE_BATCH = 200
"""At most this many runs wake in one transaction."""


@attrs.frozen(kw_only=True)
class Woken:
    """A run whose timer woke it: the run after its wake, when it was due and when it woke."""

    run: Run
    due: datetime
    woke_at: datetime

    @property
    def late_seconds(self) -> float:
        """How long after its due time the run woke (never negative: none wakes early)."""
        return (self.woke_at - self.due).total_seconds()


class TimerWakes:
    """Wakes due timers: each due run's wait node goes on, in one transaction per batch."""

    def __init__(
        self,
        uow: Callable[[], RunsUnit],
        clock: Clock,
        stepper: Stepper,
        lifecycle: RunLifecycle,
    ) -> None:
        """Continue woken runs through ``stepper``'s moves; write them with ``lifecycle``."""
        self._uow = uow
        self._clock = clock
        self._steps = TimerSteps(stepper, clock)
        self._lifecycle = lifecycle

    def wake_due(self, limit: int = WAKE_BATCH) -> list[Woken]:
        """Wake up to ``limit`` runs whose timer is due, earliest first.

        A run canceled since it was found due is left as it is.
        """
        woken: list[Woken] = []
        with self._uow() as uow:
            for tenant_id, run_id in uow.runs.lock_due_timers(self._clock.now(), limit):
                run = uow.runs.lock(tenant_id, run_id)
                if run is None or run.status is not RunStatus.WAITING_TIMER:
                    continue
                assert run.wait_until is not None  # noqa: S101 - a waiting run has its due time
                due = run.wait_until
                graph = require_graph(uow, tenant_id, run.graph_version_ref)
                run = self._lifecycle.apply(uow, self._steps.woke(run, graph))
                uow.runs.save(run)
                woken.append(Woken(run=run, due=due, woke_at=run.updated_at))
            uow.commit()
        return woken

    def seconds_to_next(self) -> float | None:
        """Seconds until the earliest waiting timer is due (0 if it is); None when none waits."""
        with self._uow() as uow:
            due = uow.runs.earliest_timer()
        if due is None:
            return None
        return max(0.0, (due - self._clock.now()).total_seconds())


__all__ = ["WAKE_BATCH", "TimerWakes", "Woken"]
