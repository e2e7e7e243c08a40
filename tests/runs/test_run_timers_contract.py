"""Timers: the kit's suite on memory and PostgreSQL, and a run being woken skipped by others."""

import threading

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.timers import TimerConformance, waiting
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.contract


class TestTimers(OnEveryStore, TimerConformance):
    pass


@pytest.mark.spec("C14 timer-durable")
def test_a_run_another_process_is_waking_is_skipped_not_waited_for(postgres_store):
    with postgres_store.unit_of_work() as tx:
        for run_id in ("run-1", "run-2"):
            tx.runs.add(waiting(run_id, 1))
        tx.commit()
    with postgres_store.unit_of_work() as first:
        assert first.runs.lock_due_timers(NOW.replace(year=2100), 1) == [("t1", "run-1")]
        found: list[list[tuple[str, str]]] = []

        def second() -> None:
            with postgres_store.unit_of_work() as other:
                found.append(other.runs.lock_due_timers(NOW.replace(year=2100), 10))

        thread = threading.Thread(target=second)
        thread.start()
        thread.join(30)
        assert not thread.is_alive()  # it skipped the held run instead of waiting for it
        assert found == [[("t1", "run-2")]]
