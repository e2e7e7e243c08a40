"""The spec's ``CandidateOutcome`` per compared model, derived from a finished backtest, pure.

Nothing here is stored: the two outcomes (incumbent first, then the candidate) are computed
from the record's per-case verdicts and measured replay costs on every read, so results stored
before they existed gain them too (ADR 0049). Over the ``n`` cases of a side:

- ``cases_evaluated``: verdict ``correct`` or ``incorrect``; ``cases_errored``: ``replay_error``
  or ``judge_error``; the rest are ``unresolved`` or ``not_run``.
- ``equivalence_rate``: correct ÷ n (the success rate of spec "Backtest rules" 5);
  ``error_rate``: errored ÷ n.
- ``est_cost_per_1k_calls_usd``: the measured replay cost per case * 1000 (one replay call per
  case; judge calls are the method's cost), None unless every case has a measured replay cost.
- ``savings_pct``: the candidate's only, (incumbent - candidate) ÷ incumbent * 100 of those
  costs; None when either is unknown or the incumbent's is zero.

Both are computed exactly and given as JSON numbers, as the rates beside them are (ADR 0094):
they are estimates derived from the per-case costs, which the record keeps as exact decimal
strings, so a reader who needs the exact figure recomputes it from those.
- ``meets_bar``: every case evaluated and the success rate at the floor.
- ``capability_ok``: False only for a candidate whose settings beyond the model made the
  backtest abstain; a judge-family clash is the method's problem, not a model's.
"""

from collections.abc import Sequence
from decimal import Decimal

import attrs

from ecp_core.backtests.model import (
    RESOLVED,
    Backtest,
    CaseVerdict,
    ResolvedModel,
    SideObservation,
)
from ecp_core.backtests.rules import CANDIDATE_SETTINGS
from ecp_core.money import EXACT, exact_sum, ratio

ERRORED = frozenset({CaseVerdict.REPLAY_ERROR, CaseVerdict.JUDGE_ERROR})
"""Verdicts of a side whose replay or judgement failed."""


@attrs.frozen(kw_only=True)
class CandidateOutcome:
    """One compared model over every case of a finished backtest (derived, never stored).

    ``model`` is the catalog ref the request named; ``provider`` the catalog's provider for it.
    Rates are fractions of all cases in ``[0, 1]``; the cost and the savings are numbers (the
    nearest binary float to the exact figure), null when unknown.
    """

    model: str
    """The model's ref in the catalog, as the request named it."""
    provider: str
    """The catalog's provider for it."""
    capability_ok: bool = True
    """Whether the model can do what the cases need."""
    cases_errored: int = 0
    """Cases whose replay or judging failed."""
    cases_evaluated: int = 0
    """Cases judged."""
    equivalence_rate: float = 0.0
    """The share of all cases judged correct (0 to 1)."""
    error_rate: float = 0.0
    """The share of all cases that errored (0 to 1)."""
    est_cost_per_1k_calls_usd: float | None = None
    """The measured replay cost per 1,000 calls in USD; null unless every case was measured."""
    is_incumbent: bool = False
    """Whether this is the model in use now."""
    meets_bar: bool = False
    """Whether it reaches the success-rate floor."""
    savings_pct: float | None = None
    """The candidate's saving against the incumbent in percent; null when either is unknown."""


def replay_cost(sides: Sequence[SideObservation]) -> Decimal | None:
    """The exact measured replay cost of a side; None unless every case has one."""
    known = [side.replay_cost_usd for side in sides if side.replay_cost_usd is not None]
    return exact_sum(known) if sides and len(known) == len(sides) else None


def cost_per_1k_calls(total: Decimal | None, cases: int) -> Decimal | None:
    """A side's replay cost per case * 1000 (one replay call per case); None when unknown."""
    return None if total is None else ratio(total.scaleb(3, context=EXACT), cases)  # * 1000


def savings_pct(incumbent: Decimal | None, candidate: Decimal | None) -> Decimal | None:
    """``(incumbent - candidate) ÷ incumbent * 100``; None when unknown or incumbent is zero.

    Both are costs over the same cases (totals or per-case alike); rounded to 12 places.
    """
    if incumbent is None or candidate is None:
        return None
    difference = exact_sum([incumbent, -candidate])
    return ratio(difference.scaleb(2, context=EXACT), incumbent)  # * 100 exactly


def as_number(exact: Decimal | None) -> float | None:
    """The float nearest an exact figure, for a field the wire gives as a JSON number."""
    return None if exact is None else float(exact)


def side_outcome(
    model: ResolvedModel,
    sides: Sequence[SideObservation],
    min_success_rate: float,
    *,
    is_incumbent: bool,
    capability_ok: bool = True,
) -> CandidateOutcome:
    """One model's outcome over its side of every case (``savings_pct`` left unknown)."""
    cases = len(sides)
    verdicts = [side.verdict for side in sides]
    evaluated = sum(verdict in RESOLVED for verdict in verdicts)
    errored = sum(verdict in ERRORED for verdict in verdicts)
    rate = verdicts.count(CaseVerdict.CORRECT) / cases if cases else 0.0
    return CandidateOutcome(
        model=model.model_ref,
        provider=model.provider,
        capability_ok=capability_ok,
        cases_errored=errored,
        cases_evaluated=evaluated,
        equivalence_rate=rate,
        error_rate=errored / cases if cases else 0.0,
        est_cost_per_1k_calls_usd=as_number(cost_per_1k_calls(replay_cost(sides), cases)),
        is_incumbent=is_incumbent,
        meets_bar=bool(cases) and evaluated == cases and rate >= min_success_rate,
    )


def candidate_outcomes(
    backtest: Backtest,
) -> tuple[CandidateOutcome, CandidateOutcome] | None:
    """Incumbent's then candidate's outcome of a finished backtest; None before it finishes."""
    if backtest.result is None:
        return None
    evidence = backtest.evaluation_evidence
    floor = backtest.min_success_rate
    incumbent_sides = [case.incumbent for case in evidence.cases]
    candidate_sides = [case.candidate for case in evidence.cases]
    incumbent = side_outcome(evidence.incumbent, incumbent_sides, floor, is_incumbent=True)
    candidate = side_outcome(
        evidence.candidate,
        candidate_sides,
        floor,
        is_incumbent=False,
        capability_ok=CANDIDATE_SETTINGS not in backtest.preflight_abstain_reasons,
    )
    saved = savings_pct(replay_cost(incumbent_sides), replay_cost(candidate_sides))
    return incumbent, attrs.evolve(candidate, savings_pct=as_number(saved))


__all__ = [
    "CandidateOutcome",
    "as_number",
    "candidate_outcomes",
    "cost_per_1k_calls",
    "replay_cost",
    "savings_pct",
    "side_outcome",
]
