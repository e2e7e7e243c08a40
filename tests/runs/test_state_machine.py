"""The run state machine: every legal move works, every other move raises."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import IllegalTransition
from ecp_core.runs import (
    TERMINAL,
    TRANSITIONS,
    FailureState,
    Run,
    can_transition,
    public_status,
    transition,
)
from ecp_core.types import RunPublicStatus, RunStatus

pytestmark = pytest.mark.unit

NOW = datetime(2026, 11, 22, tzinfo=UTC)


def run_in(status):
    return Run(
        run_id="r",
        tenant_id="t",
        deployment_ref="d",
        graph_version_ref="g@1",
        thread_id="r",
        status=status,
        created_at=NOW,
        updated_at=NOW,
    )


@pytest.mark.spec("§2.1 run-status")
@given(st.sampled_from(RunStatus), st.sampled_from(RunStatus))
def test_transition_follows_the_table(current, target):
    if target in TRANSITIONS[current]:
        assert transition(run_in(current), target, NOW).status is target
    else:
        with pytest.raises(IllegalTransition):
            transition(run_in(current), target, NOW)


@pytest.mark.spec("§2.1 run-status")
def test_the_lifecycle_of_the_issue():
    assert can_transition(RunStatus.PENDING, RunStatus.RUNNING)
    for waiting in (RunStatus.WAITING_APPROVAL, RunStatus.WAITING_INTERRUPT):
        assert can_transition(RunStatus.RUNNING, waiting)
        assert can_transition(waiting, RunStatus.RUNNING)
    assert can_transition(RunStatus.RUNNING, RunStatus.COMPLETED)
    assert can_transition(RunStatus.RUNNING, RunStatus.FAILED)
    assert can_transition(RunStatus.WAITING_APPROVAL, RunStatus.FAILED)
    assert not can_transition(RunStatus.PENDING, RunStatus.COMPLETED)
    ended = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.TERMINATED_BY_POLICY}
    assert ended | {RunStatus.CANCELED} == TERMINAL


@pytest.mark.spec("C14 cancel")
@given(st.sampled_from(RunStatus))
def test_every_run_that_has_not_ended_may_be_canceled_and_stays_so(status):
    assert can_transition(status, RunStatus.CANCELED) is (status not in TERMINAL)
    assert TRANSITIONS[RunStatus.CANCELED] == frozenset()


@pytest.mark.spec("C1 public-status", "§3.1 policy-denial")
def test_public_status():
    assert (
        public_status(RunStatus.FAILED, FailureState(reason="policy_violation"))
        is RunPublicStatus.TERMINATED_BY_POLICY
    )
    assert (
        public_status(RunStatus.FAILED, FailureState(reason="approval_rejected"))
        is RunPublicStatus.FAILED
    )
    assert (
        public_status(RunStatus.TERMINATED_BY_POLICY, None) is RunPublicStatus.TERMINATED_BY_POLICY
    )
    assert {public_status(s, None).value for s in RunStatus} | {"paused"} == {
        s.value for s in RunPublicStatus
    }


@pytest.mark.spec("C14 pause")
@given(st.sampled_from(RunStatus))
def test_a_paused_run_shows_paused_only_while_it_would_otherwise_run(status):
    shown = public_status(status, None, paused=True)
    if status in (RunStatus.PENDING, RunStatus.RUNNING):
        assert shown is RunPublicStatus.PAUSED
    else:
        assert shown is public_status(status, None)
