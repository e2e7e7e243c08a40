"""Backtests run against the loopback stand-in provider (real HTTP), on the memory store.

Faults are injected at the provider (500s, refusals, malformed bodies, hangs, unreadable judge
answers); the properties hold whatever it does: at most 4 calls per case, every call made is
counted, and ``reserved - used = returned`` exactly.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.backtests import KEY, OLD_KEY, request_body, world

from ecp_core.backtests.digest import DigestKeys
from ecp_core.backtests.model import BacktestRequest, BacktestStatus, BacktestVerdict, CaseVerdict
from ecp_core.backtests.rules import JUDGE_FAMILY_CLASH
from ecp_core.identity import system_actor
from ecp_core.memory import MemoryStore
from ecp_core.service import Ecp
from ecp_core.wire import structure

pytestmark = pytest.mark.integration

ACTOR = system_actor("acme", subject="analyst")


def ecp_over(setup):
    return Ecp.build(MemoryStore().unit_of_work, signer=None, backtests=setup)


def run(ecp, body):
    backtest, created = ecp.backtests.request(ACTOR, structure(body, BacktestRequest))
    assert created
    assert ecp.backtests.run_queued() == [backtest.backtest_id]
    return ecp.backtests.get("acme", backtest.backtest_id)


faults = st.lists(
    st.tuples(
        st.sampled_from(["big", "small", "judge"]),
        st.sampled_from(["500", "400", "429", "malformed", "garbage"]),
    ),
    max_size=12,
)


@pytest.fixture(scope="module")
def stand_in():
    with world() as armed:
        yield armed


@pytest.mark.spec("§4.4 backtest-call-reservation", "§4.4 backtest-case-verdicts")
@settings(max_examples=8)
@given(st.integers(5, 12), faults)
def test_calls_stay_within_four_per_case_and_are_all_counted(stand_in, cases, injected):
    standin = stand_in.standin
    for model, kind in injected:
        if kind == "malformed":
            standin.malformed(model)
        elif kind == "garbage":
            standin.script(model, "no verdict here")
        else:
            standin.fail(model, int(kind))
    before = standin.calls()
    ecp = ecp_over(stand_in.setup())
    done = run(ecp, request_body(cases))
    made = standin.calls() - before
    assert done.status is BacktestStatus.FINISHED
    assert done.result.provider_calls == made <= 4 * cases
    metering = done.metering
    assert metering.calls_reserved == 4 * cases
    assert metering.calls_reserved - metering.calls_used == metering.calls_returned
    assert metering.calls_used == made
    assert [c.case_index for c in done.evaluation_evidence.cases] == list(range(cases))
    errors = {CaseVerdict.REPLAY_ERROR, CaseVerdict.JUDGE_ERROR}
    found = {s.verdict for c in done.evaluation_evidence.cases for s in (c.incumbent, c.candidate)}
    if found & errors:
        assert done.result.verdict is BacktestVerdict.ABSTAIN


@pytest.mark.spec("§4.4 backtest-judge")
def test_a_judge_family_clash_abstains_with_no_call_and_returns_every_credit():
    with world() as armed:
        done = run(ecp_over(armed.setup(judge_family="compact")), request_body())
        assert armed.standin.calls() == 0
    assert done.result.verdict is BacktestVerdict.ABSTAIN
    assert done.result.abstain_reasons[0] == JUDGE_FAMILY_CLASH
    assert {c.incumbent.verdict for c in done.evaluation_evidence.cases} == {CaseVerdict.NOT_RUN}
    assert (done.metering.calls_used, done.metering.calls_returned) == (0, 20)


@pytest.mark.spec("§4.4 backtest-call-reservation", "C13 backtest-routes")
def test_an_exact_retry_after_key_rotation_returns_the_stored_result_with_no_call():
    store = MemoryStore()
    with world() as armed:
        old = armed.setup(keys=DigestKeys(key_id="old", key=OLD_KEY))
        first = Ecp.build(store.unit_of_work, signer=None, backtests=old)
        request = structure(request_body(), BacktestRequest)
        queued, _ = first.backtests.request(ACTOR, request)
        first.backtests.run_queued()
        calls = armed.standin.calls()
        rotated = armed.setup(keys=DigestKeys(key_id="new", key=KEY, retired={"old": OLD_KEY}))
        again, created = Ecp.build(
            store.unit_of_work, signer=None, backtests=rotated
        ).backtests.request(ACTOR, request)
        assert armed.standin.calls() == calls
    assert not created
    assert again.backtest_id == queued.backtest_id
    assert (again.status, again.digest_key_id) == (BacktestStatus.FINISHED, "old")


@pytest.mark.spec("§4.4 backtest-case-verdicts")
def test_a_hanging_provider_ends_at_the_deadline_with_replay_error_and_credits_returned():
    with world() as armed:
        armed.standin.hang("big", 30.0)
        ecp = ecp_over(armed.setup(deadline_seconds=1.0, call_timeout_seconds=20.0))
        done = run(ecp, request_body())
    first = done.evaluation_evidence.cases[0]
    assert (first.incumbent.verdict, first.incumbent.failure) == (
        CaseVerdict.REPLAY_ERROR,
        "deadline",
    )
    assert first.candidate.verdict is CaseVerdict.NOT_RUN
    later = {
        s.verdict for c in done.evaluation_evidence.cases[1:] for s in (c.incumbent, c.candidate)
    }
    assert later == {CaseVerdict.NOT_RUN}
    assert done.result.verdict is BacktestVerdict.ABSTAIN
    assert (done.metering.calls_used, done.metering.calls_returned) == (1, 19)


def test_a_backtest_left_running_by_a_dead_worker_is_taken_over_after_its_deadline():
    from datetime import timedelta

    import attrs

    with world() as armed:
        store = MemoryStore()
        ecp = Ecp.build(store.unit_of_work, signer=None, backtests=armed.setup(takeover_seconds=0))
        queued, _ = ecp.backtests.request(ACTOR, structure(request_body(), BacktestRequest))
        with store.unit_of_work() as tx:  # a worker claimed it, then its process died
            claimed, _ = tx.backtests.claim(queued.created_at)
            gone = attrs.evolve(
                claimed,
                status=BacktestStatus.RUNNING,
                claims=1,
                started_at=queued.created_at,
                deadline_at=queued.created_at - timedelta(seconds=1),
            )
            tx.backtests.save(gone)
            tx.commit()
        assert ecp.backtests.run_queued() == [queued.backtest_id]
        done = ecp.backtests.get("acme", queued.backtest_id)
        assert armed.standin.calls() == 0
    assert done.status is BacktestStatus.FINISHED
    assert done.claims == 2
    assert done.result.abstain_reasons == ("cases_not_run",)
