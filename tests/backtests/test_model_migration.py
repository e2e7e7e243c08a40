"""The model-migration result, pure: it always abstains, names its gaps, and reports the pairs."""

from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.backtests.migration import (
    CONFIDENCE,
    DECISION_MARGIN,
    MIGRATION_METHOD,
    MIGRATION_REPORT,
    MIN_MONTHS,
    MigrationGapCode,
    MigrationVerdict,
    PairedObservation,
    evidence_gaps,
    hoeffding_half_width,
    model_migration,
    pairs_needed,
    summarize,
)
from ecp_core.backtests.model import BacktestStatus, CaseOutcome, CaseVerdict, SideObservation
from ecp_core.money import RATIO_QUANTUM
from ecp_core.testing.conformance.backtests import backtest

pytestmark = pytest.mark.unit

costs = st.none() | st.decimals(Decimal(0), Decimal(100), places=8)
observations = st.builds(
    PairedObservation,
    case_index=st.integers(0, 24),
    month=st.sampled_from(["2026-01", "2026-02", "2026-03", "2026-04"]),
    incumbent=st.integers(0, 1),
    candidate=st.integers(0, 1),
    incumbent_cost_usd=costs,
    candidate_cost_usd=costs,
)
pair_lists = st.lists(observations, max_size=60)
verdicts = st.sampled_from(list(CaseVerdict))


def side(verdict: CaseVerdict, cost: str) -> SideObservation:
    answered = verdict not in (CaseVerdict.REPLAY_ERROR, CaseVerdict.NOT_RUN)
    return SideObservation(
        verdict=verdict,
        value=verdict.value_of,
        calls=2 if answered else 0,
        replay_cost_usd=Decimal(cost) if answered else None,
    )


def finished(pairs: list[tuple[CaseVerdict, CaseVerdict]], inc="0.002", cand="0.0005"):
    """A finished backtest whose cases carry ``pairs`` of verdicts, in case order."""
    stored = backtest(1)
    cases = tuple(
        CaseOutcome(case_index=i, incumbent=side(a, inc), candidate=side(b, cand))
        for i, (a, b) in enumerate(pairs)
    )
    return attrs.evolve(
        stored,
        status=BacktestStatus.FINISHED,
        case_count=len(pairs),
        started_at=datetime(2026, 3, 31, 23, 59, tzinfo=UTC),
        finished_at=datetime(2026, 4, 1, 0, 5, tzinfo=UTC),
        evaluation_evidence=attrs.evolve(stored.evaluation_evidence, cases=cases),
    )


@pytest.mark.spec("§9 method-versions")
@given(st.lists(st.tuples(verdicts, verdicts), min_size=5, max_size=25))
def test_a_backtest_s_migration_result_always_abstains_and_names_what_it_lacks(found):
    result = model_migration(finished(found))
    assert (result.method_version, result.report_format) == (MIGRATION_METHOD, MIGRATION_REPORT)
    assert (result.experimental, result.verdict) == (True, MigrationVerdict.ABSTAIN)
    codes = [gap.code for gap in result.evidence_gaps]
    assert codes
    assert codes[-1] is MigrationGapCode.NO_PREDICTIVE_VALIDATION
    assert all(gap.detail.endswith(".") for gap in result.evidence_gaps)
    assert len(set(codes)) == len(codes)
    settled = {CaseVerdict.CORRECT, CaseVerdict.INCORRECT}
    paired = [i for i, (a, b) in enumerate(found) if a in settled and b in settled]
    assert result.observed.paired_cases == len(paired)
    assert result.observed.unpaired_cases == len(found) - len(paired)
    assert (MigrationGapCode.UNPAIRED_CASES in codes) == (len(paired) < len(found))
    assert (codes[0] is MigrationGapCode.NO_PAIRED_CASE_LEVEL_EVIDENCE) == (not paired)
    if paired:  # one backtest is one month: never the spread the nesting needs
        assert result.observed.months_observed == 1
        assert MigrationGapCode.NO_MONTHLY_SPREAD in codes
        candidate = sum(found[i][1] is CaseVerdict.CORRECT for i in paired) / len(paired)
        assert result.observed.candidate_success_rate == candidate


@pytest.mark.spec("§9 method-versions")
def test_an_empty_observation_set_is_the_gap_no_paired_case_level_evidence():
    summary = summarize([], unpaired=0)
    codes = [gap.code for gap in evidence_gaps(summary)]
    assert codes == [
        MigrationGapCode.NO_PAIRED_CASE_LEVEL_EVIDENCE,
        MigrationGapCode.NO_PREDICTIVE_VALIDATION,
    ]
    assert summary.difference_interval is None
    assert summary.mean_cost_difference_usd is None
    everything_unsettled = [(CaseVerdict.NOT_RUN, CaseVerdict.NOT_RUN)] * 5
    result = model_migration(finished(everything_unsettled))
    assert [gap.code for gap in result.evidence_gaps] == [
        MigrationGapCode.NO_PAIRED_CASE_LEVEL_EVIDENCE,
        MigrationGapCode.UNPAIRED_CASES,
        MigrationGapCode.NO_PREDICTIVE_VALIDATION,
    ]
    assert result.verdict is MigrationVerdict.ABSTAIN


@given(pair_lists, st.integers(0, 25))
def test_the_gap_list_is_never_empty_and_empty_observations_come_first(pairs, unpaired):
    summary = summarize(pairs, unpaired)
    codes = [gap.code for gap in evidence_gaps(summary)]
    assert codes
    assert MigrationGapCode.NO_PREDICTIVE_VALIDATION in codes
    assert (codes[0] is MigrationGapCode.NO_PAIRED_CASE_LEVEL_EVIDENCE) == (not pairs)
    assert (MigrationGapCode.NO_MONTHLY_SPREAD in codes) == (
        bool(pairs) and summary.months_observed < MIN_MONTHS
    )
    assert (MigrationGapCode.TOO_FEW_PAIRS_FOR_HOEFFDING99 in codes) == (
        0 < len(pairs) < summary.pairs_needed
    )


@given(pair_lists)
def test_the_interval_contains_the_observed_difference(pairs):
    summary = summarize(pairs)
    interval = summary.difference_interval
    if not pairs:
        assert interval is None
        assert summary.success_rate_difference is None
        return
    assert interval is not None
    difference = summary.success_rate_difference
    assert difference == pytest.approx(
        summary.candidate_success_rate - summary.incumbent_success_rate
    )
    assert -1 <= interval.lower <= difference <= interval.upper <= 1
    assert interval.half_width == hoeffding_half_width(len(pairs))
    assert interval.confidence == CONFIDENCE


@given(st.integers(1, 5000))
def test_the_hoeffding_half_width_shrinks_with_more_pairs(count):
    assert hoeffding_half_width(count + 1) < hoeffding_half_width(count)
    assert hoeffding_half_width(count, 0.999) > hoeffding_half_width(count, CONFIDENCE)


def test_pairs_needed_is_the_fewest_that_reach_the_margin():
    needed = pairs_needed()
    assert hoeffding_half_width(needed) <= DECISION_MARGIN < hoeffding_half_width(needed - 1)
    assert needed == 1060  # as docs/models.md and ADR 0039 say: more than any backtest holds
    with pytest.raises(ValueError, match="at least one pair"):
        hoeffding_half_width(0)


@given(pair_lists)
def test_the_mean_cost_difference_is_exact_decimal_money(pairs):
    summary = summarize(pairs)
    costed = [
        p for p in pairs if p.incumbent_cost_usd is not None and p.candidate_cost_usd is not None
    ]
    assert summary.cost_pairs == len(costed)
    mean = summary.mean_cost_difference_usd
    if not costed:
        assert mean is None
        return
    assert isinstance(mean, Decimal)
    exact = sum(
        Fraction(p.candidate_cost_usd) - Fraction(p.incumbent_cost_usd) for p in costed
    ) / len(costed)
    assert abs(Fraction(mean) - exact) <= Fraction(RATIO_QUANTUM) / 2


def test_a_cheaper_candidate_reads_negative_and_still_abstains():
    result = model_migration(finished([(CaseVerdict.CORRECT, CaseVerdict.CORRECT)] * 25))
    observed = result.observed
    assert observed.mean_cost_difference_usd == Decimal("-0.0015")
    assert (observed.incumbent_success_rate, observed.candidate_success_rate) == (1.0, 1.0)
    assert result.verdict is MigrationVerdict.ABSTAIN
    assert [gap.code for gap in result.evidence_gaps] == [
        MigrationGapCode.TOO_FEW_PAIRS_FOR_HOEFFDING99,
        MigrationGapCode.NO_MONTHLY_SPREAD,
        MigrationGapCode.NO_PREDICTIVE_VALIDATION,
    ]
    assert result.observed.months_observed == 1  # the month the replays started in (March)
    assert result.finished_at == datetime(2026, 4, 1, 0, 5, tzinfo=UTC)


def test_enough_pairs_over_enough_months_still_abstain_for_want_of_prediction():
    pairs = [
        PairedObservation(case_index=i % 25, month=f"2026-0{1 + i % 3}", incumbent=1, candidate=1)
        for i in range(pairs_needed())
    ]
    assert [gap.code for gap in evidence_gaps(summarize(pairs))] == [
        MigrationGapCode.NO_PREDICTIVE_VALIDATION
    ]
