"""The model-migration result over a finished backtest's paired case observations, pure.

Method ``nested-paired-monthly-v3-hoeffding99-math1-predictive1`` (spec "Versioning" 3) is
experimental and always abstains. It reports what the pairs show (paired counts, both sides'
success rates, a two-sided Hoeffding 99% interval on the paired success-rate difference, the
mean measured replay-cost difference) and names each kind of evidence a migration decision
would need and this one lacks (ADR 0039):

- ``no_paired_case_level_evidence``: no case has a settled verdict on both sides;
- ``too_few_pairs_for_hoeffding99``: the Hoeffding 99% half-width exceeds the decision margin;
- ``unpaired_cases``: cases a side did not settle are left out of every pair;
- ``no_monthly_spread``: the observations span fewer months than the nesting needs;
- ``no_predictive_validation``: no later period has checked what the pairs predict (always).

A pair is one ``case_index`` whose incumbent and candidate verdicts are both correct or
incorrect; its difference, candidate minus incumbent, lies in ``[-1, 1]``. Nothing here is
stored: the result is computed from the backtest's numbers on every read.
"""

import enum
import math
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

import attrs

from ecp_core.backtests.model import Backtest, ResolvedModel
from ecp_core.money import exact_sum, ratio

MIGRATION_METHOD = "nested-paired-monthly-v3-hoeffding99-math1-predictive1"
MIGRATION_REPORT = "model-migration-v3"
"""The method id printed in the PDF report."""
CONFIDENCE = 0.99
DECISION_MARGIN = 0.10
"""The largest Hoeffding half-width that could tell a 10-point success-rate change apart."""
DIFFERENCE_RANGE = 2
"""A paired difference lies in ``[-1, 1]``: the range Hoeffding's bound needs."""
MIN_MONTHS = 3
"""Calendar months the monthly nesting needs before its spread means anything."""


class MigrationVerdict(enum.StrEnum):
    """The method's verdict: this version of it always abstains."""

    ABSTAIN = "abstain"


class MigrationGapCode(enum.StrEnum):
    """A kind of evidence a model-migration decision needs and this one lacks."""

    NO_PAIRED_CASE_LEVEL_EVIDENCE = "no_paired_case_level_evidence"
    TOO_FEW_PAIRS_FOR_HOEFFDING99 = "too_few_pairs_for_hoeffding99"
    UNPAIRED_CASES = "unpaired_cases"
    NO_MONTHLY_SPREAD = "no_monthly_spread"
    NO_PREDICTIVE_VALIDATION = "no_predictive_validation"


@attrs.frozen(kw_only=True)
class MigrationEvidenceGap:
    """One missing kind of evidence: its stable code and a sentence saying what is missing."""

    code: MigrationGapCode
    """The missing kind of evidence, as a stable code."""
    detail: str
    """What is missing, in words."""


@attrs.frozen(kw_only=True)
class PairedObservation:
    """One case settled on both sides: 1 correct or 0 incorrect each, measured replay costs."""

    case_index: int
    month: str
    """The calendar month (``YYYY-MM``, UTC) the case was observed in."""
    incumbent: int
    candidate: int
    incumbent_cost_usd: Decimal | None = None
    candidate_cost_usd: Decimal | None = None


@attrs.frozen(kw_only=True)
class DifferenceInterval:
    """A two-sided interval on candidate minus incumbent success rate, within ``[-1, 1]``."""

    lower: float
    """The lower bound."""
    upper: float
    """The upper bound."""
    half_width: float
    """Half the interval's width."""
    confidence: float = CONFIDENCE
    """The confidence level."""


@attrs.frozen(kw_only=True)
class PairedSummary:
    """What the pairs show; the rates and the interval are None when there is no pair."""

    paired_cases: int
    """Cases settled on both sides."""
    unpaired_cases: int
    """Cases settled on one side or neither."""
    months_observed: int
    """Calendar months the pairs come from."""
    pairs_needed: int
    """Pairs a Hoeffding 99% half-width of at most the decision margin needs."""
    incumbent_success_rate: float | None
    """The incumbent's success rate over the pairs; null without a pair."""
    candidate_success_rate: float | None
    """The candidate's success rate over the pairs; null without a pair."""
    success_rate_difference: float | None
    """Candidate minus incumbent success rate; null without a pair."""
    difference_interval: DifferenceInterval | None
    """A two-sided interval on that difference; null without a pair."""
    cost_pairs: int
    """Pairs with a measured replay cost on both sides."""
    mean_cost_difference_usd: Decimal | None
    """Candidate minus incumbent mean replay cost over the cost pairs (negative: cheaper)."""


@attrs.frozen(kw_only=True)
class ModelMigration:
    """The model-migration result of one backtest: always ``abstain``, with its evidence gaps."""

    backtest_id: str
    finished_at: datetime | None
    """When the backtest finished (the result's date); None only for an unfinished one."""
    method_version: str
    """The version of the method."""
    report_format: str
    """The version of this report's format."""
    experimental: bool
    """Whether the method is experimental."""
    verdict: MigrationVerdict
    """The result's verdict (always `abstain` for now)."""
    evidence_gaps: tuple[MigrationEvidenceGap, ...]
    """The kinds of evidence missing for a verdict."""
    incumbent: ResolvedModel
    """The incumbent as the catalog resolved it."""
    candidate: ResolvedModel
    """The candidate as the catalog resolved it."""
    observed: PairedSummary
    """What the paired cases show."""


def hoeffding_half_width(pairs: int, confidence: float = CONFIDENCE) -> float:
    """Half-width of the two-sided Hoeffding interval on the mean of ``pairs`` differences."""
    if pairs < 1:
        msg = f"a Hoeffding bound needs at least one pair, not {pairs}"
        raise ValueError(msg)
    return DIFFERENCE_RANGE * math.sqrt(math.log(2 / (1 - confidence)) / (2 * pairs))


def pairs_needed(margin: float = DECISION_MARGIN, confidence: float = CONFIDENCE) -> int:
    """The fewest pairs whose Hoeffding half-width is at most ``margin``."""
    needed = math.ceil(DIFFERENCE_RANGE**2 * math.log(2 / (1 - confidence)) / (2 * margin**2))
    while needed > 1 and hoeffding_half_width(needed - 1, confidence) <= margin:
        needed -= 1  # the float ceiling may overshoot by one
    while hoeffding_half_width(needed, confidence) > margin:
        needed += 1
    return needed


def summarize(pairs: Sequence[PairedObservation], unpaired: int = 0) -> PairedSummary:
    """The paired counts, rates, Hoeffding interval and mean cost difference of ``pairs``."""
    count = len(pairs)
    costed = [
        (p.candidate_cost_usd, p.incumbent_cost_usd)
        for p in pairs
        if p.candidate_cost_usd is not None and p.incumbent_cost_usd is not None
    ]
    cost_difference = ratio(
        exact_sum([*(c for c, _ in costed), *(-i for _, i in costed)]), len(costed)
    )
    base = PairedSummary(
        paired_cases=count,
        unpaired_cases=unpaired,
        months_observed=len({p.month for p in pairs}),
        pairs_needed=pairs_needed(),
        incumbent_success_rate=None,
        candidate_success_rate=None,
        success_rate_difference=None,
        difference_interval=None,
        cost_pairs=len(costed),
        mean_cost_difference_usd=cost_difference,
    )
    if not count:
        return base
    incumbent = sum(p.incumbent for p in pairs) / count
    candidate = sum(p.candidate for p in pairs) / count
    difference = sum(p.candidate - p.incumbent for p in pairs) / count
    half = hoeffding_half_width(count)
    interval = DifferenceInterval(
        lower=max(-1.0, difference - half), upper=min(1.0, difference + half), half_width=half
    )
    return attrs.evolve(
        base,
        incumbent_success_rate=incumbent,
        candidate_success_rate=candidate,
        success_rate_difference=difference,
        difference_interval=interval,
    )


def evidence_gaps(summary: PairedSummary) -> tuple[MigrationEvidenceGap, ...]:
    """Every kind of evidence ``summary`` lacks, most basic first; never empty."""
    gaps = []
    interval = summary.difference_interval
    if interval is None:
        gaps.append(
            MigrationEvidenceGap(
                code=MigrationGapCode.NO_PAIRED_CASE_LEVEL_EVIDENCE,
                detail="No case has a settled verdict (correct or incorrect) on both models, "
                "so there is no paired case-level observation to compare them on.",
            )
        )
    elif interval.half_width > DECISION_MARGIN:
        gaps.append(
            MigrationEvidenceGap(
                code=MigrationGapCode.TOO_FEW_PAIRS_FOR_HOEFFDING99,
                detail=f"{summary.paired_cases} paired case(s) give a Hoeffding 99% half-width "
                f"of {interval.half_width:.3f}; a half-width of at most {DECISION_MARGIN:.2f} "
                f"needs {summary.pairs_needed} pairs.",
            )
        )
    if summary.unpaired_cases:
        gaps.append(
            MigrationEvidenceGap(
                code=MigrationGapCode.UNPAIRED_CASES,
                detail=f"{summary.unpaired_cases} case(s) lack a settled verdict on one side "
                "and are left out of every pair.",
            )
        )
    if interval is not None and summary.months_observed < MIN_MONTHS:
        gaps.append(
            MigrationEvidenceGap(
                code=MigrationGapCode.NO_MONTHLY_SPREAD,
                detail=f"The pairs come from {summary.months_observed} calendar month(s); "
                f"the monthly nesting needs at least {MIN_MONTHS}.",
            )
        )
    gaps.append(
        MigrationEvidenceGap(
            code=MigrationGapCode.NO_PREDICTIVE_VALIDATION,
            detail="No later period has checked what these pairs predict; this experimental "
            "method never validates predictions, so it cannot recommend a migration.",
        )
    )
    return tuple(gaps)


def paired_observations(backtest: Backtest) -> tuple[tuple[PairedObservation, ...], int]:
    """The backtest's cases settled on both sides, and how many cases are not."""
    moment = backtest.started_at or backtest.created_at
    month = f"{moment.year:04d}-{moment.month:02d}"
    pairs = tuple(
        PairedObservation(
            case_index=case.case_index,
            month=month,
            incumbent=case.incumbent.value,
            candidate=case.candidate.value,
            incumbent_cost_usd=case.incumbent.replay_cost_usd,
            candidate_cost_usd=case.candidate.replay_cost_usd,
        )
        for case in backtest.evaluation_evidence.cases
        if case.incumbent.value is not None and case.candidate.value is not None
    )
    return pairs, backtest.case_count - len(pairs)


def model_migration(backtest: Backtest) -> ModelMigration:
    """The model-migration result of ``backtest``'s paired observations (always abstains)."""
    pairs, unpaired = paired_observations(backtest)
    summary = summarize(pairs, unpaired)
    evidence = backtest.evaluation_evidence
    return ModelMigration(
        backtest_id=backtest.backtest_id,
        finished_at=backtest.finished_at,
        method_version=MIGRATION_METHOD,
        report_format=MIGRATION_REPORT,
        experimental=True,
        verdict=MigrationVerdict.ABSTAIN,
        evidence_gaps=evidence_gaps(summary),
        incumbent=evidence.incumbent,
        candidate=evidence.candidate,
        observed=summary,
    )


__all__ = [
    "CONFIDENCE",
    "DECISION_MARGIN",
    "MIGRATION_METHOD",
    "MIGRATION_REPORT",
    "MIN_MONTHS",
    "DifferenceInterval",
    "MigrationEvidenceGap",
    "MigrationGapCode",
    "MigrationVerdict",
    "ModelMigration",
    "PairedObservation",
    "PairedSummary",
    "evidence_gaps",
    "hoeffding_half_width",
    "model_migration",
    "paired_observations",
    "summarize",
]
