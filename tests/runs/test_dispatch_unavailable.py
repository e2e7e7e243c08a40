"""A database that refuses an attempt (away, restarting, out of space) never ends a run.

The dispatcher backs such a run off without counting the failure against it; any other error is
counted, and the run ends ``dispatch_error`` at the last attempt (ADR 0019).
"""

from typing import Any, Self

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.errors import DatabaseFull, DatabaseUnavailable
from ecp_core.memory import MemoryStore
from ecp_core.system import FixedClock
from ecp_core.testing.samples import NOW
from ecp_core.types import RunStatus
from ecp_core.webhooks import RetrySchedule

pytestmark = pytest.mark.unit

MAX_ATTEMPTS = 3
POLICY = RetrySchedule(max_attempts=MAX_ATTEMPTS, base_seconds=1, max_seconds=2)
REFUSALS = {
    "away": lambda: DatabaseUnavailable("the database is unavailable"),
    "full": lambda: DatabaseFull("the database is out of disk space"),
    "bug": lambda: RuntimeError("a row that cannot be read"),
}


class Refusing:
    """A unit of work of the memory store whose first run loads raise the scripted errors.

    What a database that is away or full, or a row that cannot be read, does to a dispatch.
    """

    def __init__(self, inner: Any, script: list[str]) -> None:
        self._inner, self._script = inner, script

    def __getattr__(self, name: str) -> Any:
        if name == "runs":
            return RefusingRuns(self._inner.runs, self._script)
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)


class RefusingRuns:
    def __init__(self, inner: Any, script: list[str]) -> None:
        self._inner, self._script = inner, script

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def lock(self, tenant_id: str, run_id: str) -> Any:
        if self._script:
            refusal = REFUSALS[self._script.pop(0)]()
            raise refusal
        return self._inner.lock(tenant_id, run_id)


def world(outcomes: list[str]) -> tuple[Ecp, FixedClock, str]:
    """A run whose dispatches meet each of ``outcomes`` in turn, then go through."""
    store, script = MemoryStore(), []
    clock = FixedClock(NOW)
    ecp = Ecp.build(
        lambda: Refusing(store.unit_of_work(), script),
        signer=Ed25519Signer.generate(),
        clock=clock,
        dispatch_retry=POLICY,
    )
    graph = GraphBuilder("g").action("a", "echo").end("z").chain("a", "z").build()
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    script.extend(outcomes)
    return ecp, clock, run.run_id


def dispatch_until_done(ecp: Ecp, clock: FixedClock, run_id: str) -> RunStatus:
    for _ in range(100):
        status = ecp.runs.get("t", run_id).status
        if status in {RunStatus.COMPLETED, RunStatus.FAILED}:
            return status
        clock.advance(60)  # past any backoff
        ecp.runs.advance_next()
    raise AssertionError("the run never ended")


@pytest.mark.spec("C19 full-disk", "C8 poison-runs")
@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(REFUSALS)), max_size=8))
def test_only_the_run_s_own_failures_count_toward_dispatch_error(outcomes):
    ecp, clock, run_id = world(outcomes)
    counted, ended = 0, False
    for outcome in outcomes:  # what the run should see: the counted failures, in order
        if outcome == "bug":
            counted += 1
            if counted >= MAX_ATTEMPTS:
                ended = True
                break
    status = dispatch_until_done(ecp, clock, run_id)
    assert status is (RunStatus.FAILED if ended else RunStatus.COMPLETED)
    if ended:
        assert ecp.runs.get("t", run_id).failure_state.reason == "dispatch_error"
