"""The backtest rules, pure: validation, abstention before any call, prompts, the verdict.

- 5 to 25 cases; every model ref is in the catalog; the judge is neither compared model
  (422 otherwise). A judge of the incumbent's or the candidate's family, or a candidate naming
  settings besides its model, abstains before any provider call (spec "Backtest rules" 3).
- At most 4 provider calls per case: each side's replay and, when it answered, its judgement.
- Success rate = passed cases ÷ all cases. Any verdict but correct or incorrect counts against
  the rate and forces abstention (rule 5). A pass needs the candidate's rate at the floor and
  positive projected savings per case from measured replay costs; its action is
  ``review_candidate`` (rule 2).
"""

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from ecp_core.backtests.model import (
    EVALUATOR_VERSION,
    JUDGE_PARAMETER,
    RESOLVED,
    RUBRIC,
    BacktestAction,
    BacktestRequest,
    BacktestResult,
    BacktestVerdict,
    CaseOutcome,
    CaseVerdict,
    EvaluationEvidence,
    ResolvedModel,
    SideObservation,
    SideSummary,
)
from ecp_core.entitlements.model import CALLS_PER_BACKTEST_CASE
from ecp_core.errors import Configurable, FieldError, ValidationFailed
from ecp_core.models.model import CatalogEntry

LIMITATIONS = (
    "exploratory_small_labeled_sample",
    "single_judge_model",
    "tool_free_single_turn_replay",
    "replay_costs_only",
)
"""What every backtest result is not: a survey, a panel of judges, a workflow run, a bill."""

JUDGE_FAMILY_CLASH = "judge_family_clash"
CANDIDATE_SETTINGS = "candidate_settings_beyond_model"
ABSTAIN_BY_VERDICT = {
    CaseVerdict.UNRESOLVED: "unresolved_verdicts",
    CaseVerdict.REPLAY_ERROR: "replay_errors",
    CaseVerdict.JUDGE_ERROR: "judge_errors",
    CaseVerdict.NOT_RUN: "cases_not_run",
}
BELOW_FLOOR = "below_success_rate_floor"
NO_SAVINGS = "no_projected_savings"

JUDGE_RUBRIC = """You grade one answer of an AI workflow against its labeled expected answer.
Rubric correctness-replay/4. You receive a JSON object with workflow_instruction, case_input,
expected and replay_output. The answer is correct when replay_output states what expected
states for case_input under workflow_instruction (wording, order and formatting may differ;
extra material that contradicts expected makes it incorrect). It is incorrect when it
contradicts, omits or replaces what expected states. Answer unresolved only when the material
does not allow either judgement. Reply with one JSON object and nothing else:
{"verdict": "correct" | "incorrect" | "unresolved", "rationale": "<one sentence>"}"""

RUBRIC_HASH = "sha256:" + hashlib.sha256(JUDGE_RUBRIC.encode("utf-8")).hexdigest()


def calls_reserved(cases: int) -> int:
    """Provider calls a backtest of ``cases`` cases may make: 4 per case."""
    return CALLS_PER_BACKTEST_CASE * cases


def catalog_evidence(
    request: BacktestRequest, catalog: Mapping[str, CatalogEntry]
) -> EvaluationEvidence:
    """The catalog's view of the three models; ValidationFailed names what is wrong."""
    errors = [
        FieldError(loc=loc, msg="not a model of the model catalog")
        for loc, ref in (
            (("incumbent", "model"), request.incumbent.model),
            (("candidate", "model"), request.candidate.model),
            (("judge",), request.judge),
        )
        if ref not in catalog
    ]
    uncatalogued = bool(errors)
    if request.judge in (request.incumbent.model, request.candidate.model):
        errors.append(FieldError(loc=("judge",), msg="must differ from incumbent and candidate"))
    if errors:
        raise ValidationFailed(
            "the backtest's models are not usable",
            errors=errors,
            configuration=(Configurable.MODEL_CATALOG,) if uncatalogued else (),
        )

    def resolved(ref: str) -> ResolvedModel:
        entry = catalog[ref]
        return ResolvedModel(
            model_ref=ref, provider=str(entry.provider), model=entry.model, family=entry.family
        )

    return EvaluationEvidence(
        incumbent=resolved(request.incumbent.model),
        candidate=resolved(request.candidate.model),
        judge=resolved(request.judge),
        evaluator_version=EVALUATOR_VERSION,
        rubric=RUBRIC,
        rubric_hash=RUBRIC_HASH,
        judge_parameter=JUDGE_PARAMETER,
    )


def preflight(request: BacktestRequest, evidence: EvaluationEvidence) -> tuple[str, ...]:
    """Reasons to abstain before any provider call (spec "Backtest rules" 3)."""
    reasons = []
    if evidence.judge.family in (evidence.incumbent.family, evidence.candidate.family):
        reasons.append(JUDGE_FAMILY_CLASH)
    if request.candidate.has_settings:
        reasons.append(CANDIDATE_SETTINGS)
    return tuple(reasons)


def judge_prompt(instruction: str, case_input: str, expected: str, output: str) -> str:
    """The judge's user message: the four texts side by side, as one JSON object."""
    return json.dumps(
        {
            "workflow_instruction": instruction,
            "case_input": case_input,
            "expected": expected,
            "replay_output": output,
        },
        ensure_ascii=False,
    )


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_JUDGED = {v.value: v for v in (CaseVerdict.CORRECT, CaseVerdict.INCORRECT, CaseVerdict.UNRESOLVED)}


def read_judgement(text: str) -> CaseVerdict | None:
    """The verdict of a judge's answer; None when it holds no readable verdict."""
    found = _OBJECT.search(text)
    if found is None:
        return None
    try:
        answer = json.loads(found.group(0))
    except ValueError:
        return None
    verdict = answer.get("verdict") if isinstance(answer, dict) else None
    return _JUDGED.get(verdict.strip().lower()) if isinstance(verdict, str) else None


def _summary(sides: Sequence[SideObservation]) -> SideSummary:
    passed = sum(side.verdict is CaseVerdict.CORRECT for side in sides)
    replay = [side.replay_cost_usd for side in sides]
    replayed = [cost for cost in replay if cost is not None]
    total = sum(replayed, Decimal(0))
    return SideSummary(
        passed=passed,
        cases=len(sides),
        success_rate=passed / len(sides),
        replay_cost_usd=total,
        judge_cost_usd=sum(
            (side.judge_cost_usd for side in sides if side.judge_cost_usd is not None), Decimal(0)
        ),
        cost_per_case_usd=total / len(sides) if len(replayed) == len(sides) else None,
    )


def decide(
    outcomes: Sequence[CaseOutcome], min_success_rate: float, preflight_reasons: Sequence[str]
) -> BacktestResult:
    """The result over every case's outcome (one per case, in case order)."""
    incumbent = _summary([o.incumbent for o in outcomes])
    candidate = _summary([o.candidate for o in outcomes])
    verdicts = {side.verdict for o in outcomes for side in (o.incumbent, o.candidate)}
    abstain = [*preflight_reasons]
    abstain += [ABSTAIN_BY_VERDICT[v] for v in CaseVerdict if v in verdicts and v not in RESOLVED]
    savings = (
        incumbent.cost_per_case_usd - candidate.cost_per_case_usd
        if incumbent.cost_per_case_usd is not None and candidate.cost_per_case_usd is not None
        else None
    )
    fails = []
    if not abstain:
        if candidate.success_rate < min_success_rate:
            fails.append(BELOW_FLOOR)
        if savings is None or savings <= 0:
            fails.append(NO_SAVINGS)
    verdict = (
        BacktestVerdict.ABSTAIN
        if abstain
        else BacktestVerdict.FAIL
        if fails
        else BacktestVerdict.PASS
    )
    return BacktestResult(
        verdict=verdict,
        recommended_action=BacktestAction.REVIEW_CANDIDATE
        if verdict is BacktestVerdict.PASS
        else BacktestAction.KEEP_INCUMBENT,
        abstain_reasons=tuple(abstain),
        fail_reasons=tuple(fails),
        min_success_rate=min_success_rate,
        incumbent=incumbent,
        candidate=candidate,
        projected_savings_per_case_usd=savings,
        provider_calls=sum(o.incumbent.calls + o.candidate.calls for o in outcomes),
    )


def not_run(case_index: int) -> CaseOutcome:
    """A case no call was made for."""
    side = SideObservation(verdict=CaseVerdict.NOT_RUN, value=None, calls=0)
    return CaseOutcome(case_index=case_index, incumbent=side, candidate=side)


__all__ = [
    "JUDGE_RUBRIC",
    "LIMITATIONS",
    "RUBRIC_HASH",
    "calls_reserved",
    "catalog_evidence",
    "decide",
    "judge_prompt",
    "not_run",
    "preflight",
    "read_judgement",
]
