"""Conformance of the runs' timers: which runs are due, in which order, and their due time kept.

A store finds the runs waiting on a timer whose ``wait_until`` has come, earliest first (then by
id), at most ``limit`` of them; runs not yet due, and runs in any other status, are never found.
"""

from datetime import timedelta

import attrs
import pytest

from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.run.model import Run
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW, run
from ecp_core.types import RunStatus


def waiting(run_id: str, seconds: float, tenant: str = "t1") -> Run:
    """A run waiting on a timer due ``seconds`` after :data:`NOW`."""
    return attrs.evolve(
        run(run_id, tenant=tenant, status=RunStatus.WAITING_TIMER),
        wait_until=NOW + timedelta(seconds=seconds),
    )


class TimerConformance(StoreSuite):
    """Due timers: found when due, earliest first, within the limit; the due time kept exactly."""

    @pytest.mark.spec("C14 timer")
    def test_due_timers_are_found_earliest_first_within_the_limit(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Only due runs waiting on a timer are found, by due time then id, ``limit`` at most."""
        with uow() as tx:
            tx.runs.add(waiting("late", 30, tenant="t2"))
            tx.runs.add(waiting("b-early", 10))
            tx.runs.add(waiting("a-early", 10))
            tx.runs.add(waiting("later", 3600))
            running = attrs.evolve(waiting("running", 1), status=RunStatus.RUNNING)
            tx.runs.add(running)
            tx.commit()
        at = NOW + timedelta(seconds=30)
        with uow() as tx:
            assert tx.runs.lock_due_timers(at, 10) == [
                ("t1", "a-early"),
                ("t1", "b-early"),
                ("t2", "late"),
            ]
            assert tx.runs.lock_due_timers(at, 2) == [("t1", "a-early"), ("t1", "b-early")]
            assert tx.runs.lock_due_timers(NOW + timedelta(seconds=9.999999), 10) == []
            stored = tx.runs.get("t1", "later")
            assert stored is not None
            assert stored.wait_until == NOW + timedelta(seconds=3600)
