"""The spec's CandidateOutcome of a finished backtest, pure: counts, rates, costs, bar, savings."""

from decimal import Decimal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.backtests import old_record

from ecp_core.backtests.candidates import (
    CandidateOutcome,
    candidate_outcomes,
    cost_per_1k_calls,
    savings_pct,
)
from ecp_core.backtests.model import (
    RESOLVED,
    Backtest,
    BacktestStatus,
    CaseOutcome,
    CaseVerdict,
    SideObservation,
)
from ecp_core.backtests.responses import BacktestResponse
from ecp_core.backtests.rules import CANDIDATE_SETTINGS, JUDGE_FAMILY_CLASH, decide
from ecp_core.money import RATIO_QUANTUM
from ecp_core.testing.conformance.backtests import backtest
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

RULE = "§2.6 candidate-outcome"
ERRORED = {CaseVerdict.REPLAY_ERROR, CaseVerdict.JUDGE_ERROR}
LEFT_OPEN = {CaseVerdict.UNRESOLVED, CaseVerdict.NOT_RUN}


def side(verdict: CaseVerdict, cost: Decimal | None) -> SideObservation:
    replayed = verdict not in (CaseVerdict.REPLAY_ERROR, CaseVerdict.NOT_RUN)
    return SideObservation(
        verdict=verdict,
        value=verdict.value_of,
        calls=0 if verdict is CaseVerdict.NOT_RUN else 2 if replayed else 1,
        replay_cost_usd=cost if replayed else None,
    )


def finished(cases: list[CaseOutcome], floor: float = 0.8, reasons: tuple[str, ...] = ()):
    """A finished backtest over ``cases``, its result decided as the worker decides it."""
    stored = backtest(1)
    return attrs.evolve(
        stored,
        status=BacktestStatus.FINISHED,
        case_count=len(cases),
        min_success_rate=floor,
        preflight_abstain_reasons=reasons,
        evaluation_evidence=attrs.evolve(stored.evaluation_evidence, cases=tuple(cases)),
        result=decide(cases, floor, reasons),
    )


def paired(verdicts, incumbent_cost: str = "0.002", candidate_cost: str = "0.001"):
    return [
        CaseOutcome(
            case_index=i,
            incumbent=side(a, Decimal(incumbent_cost)),
            candidate=side(b, Decimal(candidate_cost)),
        )
        for i, (a, b) in enumerate(verdicts)
    ]


verdicts = st.sampled_from(list(CaseVerdict))
costs = st.none() | st.decimals(Decimal(0), Decimal(5), places=8)
cases = st.lists(st.tuples(verdicts, costs, verdicts, costs), min_size=5, max_size=25).map(
    lambda drawn: [
        CaseOutcome(case_index=i, incumbent=side(a, ac), candidate=side(b, bc))
        for i, (a, ac, b, bc) in enumerate(drawn)
    ]
)
reasons = st.sampled_from([(), (JUDGE_FAMILY_CLASH,), (CANDIDATE_SETTINGS,)])


def replay_total(sides: list[SideObservation]) -> Decimal | None:
    found = [s.replay_cost_usd for s in sides]
    return None if None in found else sum(found, Decimal(0))  # type: ignore[arg-type]


@pytest.mark.spec(RULE)
@given(cases, st.floats(0, 1), reasons)
def test_every_outcome_follows_from_the_case_verdicts_and_costs(drawn, floor, preflight):
    stored = finished(drawn, floor, preflight)
    derived = candidate_outcomes(stored)
    assert derived is not None
    assert stored.result is not None
    incumbent, candidate = derived
    assert (incumbent.is_incumbent, candidate.is_incumbent) == (True, False)
    assert (incumbent.model, candidate.model) == ("big", "small")
    assert incumbent.savings_pct is None
    summaries = (stored.result.incumbent, stored.result.candidate)
    for outcome, sides, summary in zip(
        derived,
        ([c.incumbent for c in drawn], [c.candidate for c in drawn]),
        summaries,
        strict=True,
    ):
        found = [s.verdict for s in sides]
        left_open = sum(v in LEFT_OPEN for v in found)
        assert outcome.cases_evaluated + outcome.cases_errored + left_open == len(drawn)
        assert outcome.cases_evaluated == sum(v in RESOLVED for v in found)
        assert outcome.cases_errored == sum(v in ERRORED for v in found)
        assert 0 <= outcome.equivalence_rate <= 1
        assert 0 <= outcome.error_rate <= 1
        assert outcome.equivalence_rate == summary.success_rate  # the stored result's rate
        assert outcome.error_rate == outcome.cases_errored / len(drawn)
        assert outcome.meets_bar == (
            outcome.cases_evaluated == len(drawn) and outcome.equivalence_rate >= floor
        )
        total = replay_total(sides)
        if total is None:
            assert outcome.est_cost_per_1k_calls_usd is None
        else:
            exact_per_1k = cost_per_1k_calls(total, len(drawn))
            assert exact_per_1k is not None
            assert abs(exact_per_1k - total * 1000 / len(drawn)) <= RATIO_QUANTUM / 2
            assert outcome.est_cost_per_1k_calls_usd == float(exact_per_1k)  # nearest float
    assert incumbent.capability_ok
    assert candidate.capability_ok == (CANDIDATE_SETTINGS not in preflight)
    spent = replay_total([c.incumbent for c in drawn]), replay_total([c.candidate for c in drawn])
    if None in spent or spent[0] == 0:
        assert candidate.savings_pct is None
    else:
        assert candidate.savings_pct is not None
        difference = spent[0] - spent[1]  # type: ignore[operator]
        assert (candidate.savings_pct > 0, candidate.savings_pct < 0) == (
            difference > 0,
            difference < 0,
        )


@pytest.mark.spec(RULE)
@given(
    st.decimals(Decimal("0.00000001"), Decimal(100), places=8),
    st.decimals(Decimal(0), Decimal(100), places=8),
)
def test_savings_sign_matches_the_cost_order(incumbent, candidate):
    found = savings_pct(incumbent, candidate)
    assert found is not None
    assert (found > 0, found == 0, found < 0) == (
        incumbent > candidate,
        incumbent == candidate,
        incumbent < candidate,
    )
    assert savings_pct(Decimal(0), candidate) is None
    assert savings_pct(None, candidate) is savings_pct(incumbent, None) is None


@pytest.mark.spec(RULE)
def test_a_clean_pass_reads_as_two_outcomes_with_exact_costs_and_savings():
    good = (CaseVerdict.CORRECT, CaseVerdict.CORRECT)
    bad = (CaseVerdict.CORRECT, CaseVerdict.INCORRECT)
    derived = candidate_outcomes(finished(paired([good] * 4 + [bad]), floor=0.8))
    assert derived == (
        CandidateOutcome(
            model="big",
            provider="openai",
            cases_evaluated=5,
            equivalence_rate=1.0,
            est_cost_per_1k_calls_usd=2.0,
            is_incumbent=True,
            meets_bar=True,
        ),
        CandidateOutcome(
            model="small",
            provider="openai",
            cases_evaluated=5,
            equivalence_rate=0.8,
            est_cost_per_1k_calls_usd=1.0,
            meets_bar=True,
            savings_pct=50.0,
        ),
    )
    wire = unstructure(derived[1])
    assert (wire["est_cost_per_1k_calls_usd"], wire["savings_pct"]) == (1.0, 50.0)  # numbers


@pytest.mark.spec(RULE)
def test_errors_and_unsettled_cases_miss_the_bar_and_unmeasured_costs_are_null():
    verdicts = [
        (CaseVerdict.CORRECT, CaseVerdict.REPLAY_ERROR),
        (CaseVerdict.CORRECT, CaseVerdict.JUDGE_ERROR),
        (CaseVerdict.CORRECT, CaseVerdict.UNRESOLVED),
        (CaseVerdict.CORRECT, CaseVerdict.CORRECT),
        (CaseVerdict.CORRECT, CaseVerdict.CORRECT),
    ]
    incumbent, candidate = candidate_outcomes(finished(paired(verdicts), floor=0.0)) or ()
    assert (incumbent.meets_bar, incumbent.cases_evaluated, incumbent.error_rate) == (True, 5, 0)
    assert (candidate.cases_evaluated, candidate.cases_errored) == (2, 2)
    assert (candidate.equivalence_rate, candidate.error_rate) == (0.4, 0.4)
    assert not candidate.meets_bar  # the floor is zero, yet three cases are not settled
    assert candidate.est_cost_per_1k_calls_usd is None  # the replay that failed has no cost
    assert candidate.savings_pct is None


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("reason", "candidate_ok"), [(CANDIDATE_SETTINGS, False), (JUDGE_FAMILY_CLASH, True)]
)
def test_only_candidate_settings_make_capability_not_ok(reason, candidate_ok):
    not_run = [(CaseVerdict.NOT_RUN, CaseVerdict.NOT_RUN)] * 5
    incumbent, candidate = candidate_outcomes(finished(paired(not_run), reasons=(reason,))) or ()
    assert (incumbent.capability_ok, candidate.capability_ok) == (True, candidate_ok)
    for outcome in (incumbent, candidate):
        assert (outcome.cases_evaluated, outcome.cases_errored, outcome.meets_bar) == (0, 0, False)
        assert outcome.est_cost_per_1k_calls_usd is None


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("status", [BacktestStatus.QUEUED, BacktestStatus.RUNNING])
def test_no_outcomes_before_the_backtest_finishes(status):
    shown = BacktestResponse.of(attrs.evolve(backtest(1), status=status))
    assert shown.candidates is None
    assert unstructure(shown)["candidates"] is None


@pytest.mark.spec(RULE)
def test_a_result_stored_before_outcomes_existed_reads_and_gains_them():
    stored = structure(old_record(), Backtest)
    shown = unstructure(BacktestResponse.of(stored))
    assert {k: v for k, v in shown.items() if k != "candidates"} == unstructure(stored)
    assert shown["candidates"] == [
        {
            "model": "big",
            "provider": "openai",
            "capability_ok": True,
            "cases_errored": 0,
            "cases_evaluated": 5,
            "equivalence_rate": 1.0,
            "error_rate": 0.0,
            "est_cost_per_1k_calls_usd": 6.0,
            "is_incumbent": True,
            "meets_bar": True,
            "savings_pct": None,
        },
        {
            "model": "small",
            "provider": "anthropic",
            "capability_ok": True,
            "cases_errored": 0,
            "cases_evaluated": 5,
            "equivalence_rate": 0.6,
            "error_rate": 0.0,
            "est_cost_per_1k_calls_usd": 2.0,
            "is_incumbent": False,
            "meets_bar": True,
            "savings_pct": 66.666666666667,
        },
    ]
