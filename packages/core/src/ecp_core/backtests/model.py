"""Backtests (``observed-replay-policy/1``): the request, per-case outcomes and the stored record.

The record keeps numbers and identifiers only: verdicts, token counts, measured costs, call
counts and failure kinds. Case inputs, expected answers, model outputs, judge rationales and
exception text are never part of it (spec "Backtest rules" 6); the request is known afterwards
only by its keyed digest.
"""

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Items, Range, Text, checked

METHOD_VERSION = "observed-replay-policy/1"
CLAIM_CLASS = "exploratory_model_experiment"
RUBRIC = "correctness-replay/4"
"""The judge rubric of new backtests; retained results keep theirs (/1, /2, /3)."""
EVALUATOR_VERSION = "ecp-replay-judge/1"
JUDGE_PARAMETER = "judge_max_tokens_8192"
JUDGE_MAX_TOKENS = 8192
"""The judge's output limit, reasoning included (spec "Backtest rules" 4)."""
MIN_CASES = 5
MAX_CASES = 25
DEFAULT_REPLAY_MAX_TOKENS = 1024
"""Output tokens of a replay when the incumbent names none."""

ModelRef = Annotated[str, Text(1, 200, trimmed=True)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestCase:
    """One labeled, tool-free case: what the workflow is asked and the answer expected."""

    input: Annotated[str, Text(1, 100_000)]
    """What the workflow is asked."""
    expected: Annotated[str, Text(1, 100_000)]
    """The answer expected."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ReplayModel:
    """A model to replay the cases with, by catalog ref, and its settings.

    The incumbent's settings apply to both replays; a candidate that names any setting besides
    its model changes more than the model, and the backtest abstains (spec "Backtest rules" 3).
    """

    model: ModelRef
    """The model's ref in the catalog."""
    max_tokens: Annotated[int, Range(1, 32_768)] | None = None
    """The most tokens an answer may have; the incumbent's setting applies to both sides."""
    temperature: Annotated[float, Range(0, 2)] | None = None
    """The sampling temperature; the incumbent's setting applies to both sides."""

    @property
    def has_settings(self) -> bool:
        """Whether anything besides the model is set."""
        return self.max_tokens is not None or self.temperature is not None


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestConstraints:
    """What the candidate must show: its success-rate floor (required; zero is a choice)."""

    min_success_rate: Annotated[float, Range(0, 1)]
    """The lowest success rate the candidate may have (0 to 1; zero is a choice)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestRequest:
    """Body of ``POST /v1/backtests``: the instruction, 5 to 25 cases, the models, the floor."""

    instruction: Annotated[str, Text(1, 100_000)]
    """The workflow instruction: the system prompt of every replay."""
    cases: Annotated[tuple[BacktestCase, ...], Items(MIN_CASES, MAX_CASES)]
    """The labeled cases to replay (5 to 25)."""
    incumbent: ReplayModel
    """The model in use now."""
    candidate: ReplayModel
    """The model that may replace it."""
    judge: ModelRef
    """The catalog ref of the model that judges each answer against the expected one."""
    constraints: BacktestConstraints
    """What the candidate must show."""


class BacktestStatus(enum.StrEnum):
    """Where a backtest is: waiting for a worker, being replayed, or done."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"


class CaseVerdict(enum.StrEnum):
    """One side's verdict on one case (spec "Backtest rules" 5)."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNRESOLVED = "unresolved"
    REPLAY_ERROR = "replay_error"
    JUDGE_ERROR = "judge_error"
    NOT_RUN = "not_run"

    @property
    def value_of(self) -> int | None:
        """1 for passed, 0 for failed, None for everything the judge did not settle."""
        return {CaseVerdict.CORRECT: 1, CaseVerdict.INCORRECT: 0}.get(self)


RESOLVED = frozenset({CaseVerdict.CORRECT, CaseVerdict.INCORRECT})
"""Verdicts that settle a case; any other forces abstention."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SideObservation:
    """One side of one case, numbers only: verdict, tokens, measured costs, calls, failure kind.

    ``failure`` is a :class:`ecp_core.models.model.CallFailure` value, ``deadline`` when the
    backtest's deadline cut the call, or ``judge_answer`` when the judge's answer could not be
    read; never the provider's or an exception's text.
    """

    verdict: CaseVerdict
    """The verdict on this side of the case."""
    value: int | None
    """1 when correct, 0 when incorrect; null otherwise."""
    calls: Annotated[int, Range(0, 2)]
    """Provider calls made for this side (replay and judge)."""
    replay_input_tokens: int | None = None
    """Input tokens of the replay."""
    replay_output_tokens: int | None = None
    """Output tokens of the replay."""
    replay_cost_usd: Decimal | None = None
    judge_input_tokens: int | None = None
    """Input tokens of the judging."""
    judge_output_tokens: int | None = None
    """Output tokens of the judging."""
    judge_cost_usd: Decimal | None = None
    failure: str | None = None
    """What kind of failure stopped it, as a code; never the provider's text."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CaseOutcome:
    """Incumbent and candidate on one case, paired by zero-based ``case_index``."""

    case_index: Annotated[int, Range(0, MAX_CASES - 1)]
    """The case's zero-based position in the request."""
    incumbent: SideObservation
    """The incumbent on this case."""
    candidate: SideObservation
    """The candidate on this case."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ResolvedModel:
    """A model ref as the catalog resolved it when the backtest was requested."""

    model_ref: str
    """The ref the request named."""
    provider: str
    """The provider the catalog resolved it to."""
    model: str
    """The provider's model name."""
    family: str
    """The model family (a judge may not share the family of a compared model)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class EvaluationEvidence:
    """What the result rests on: the models, the judge's rubric and the per-case outcomes."""

    incumbent: ResolvedModel
    """The incumbent as the catalog resolved it."""
    candidate: ResolvedModel
    """The candidate as the catalog resolved it."""
    judge: ResolvedModel
    """The judge as the catalog resolved it."""
    evaluator_version: str
    """The version of the evaluator."""
    rubric: str
    """The rubric the judge was given."""
    rubric_hash: str
    """The digest of the rubric."""
    judge_parameter: str
    """The judge's call settings, as a code."""
    cases: tuple[CaseOutcome, ...] = ()
    """Each case's outcome on both sides."""


class BacktestVerdict(enum.StrEnum):
    """The backtest's answer."""

    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    ABSTAIN = "abstain"


class BacktestAction(enum.StrEnum):
    """What to do next: review the candidate (a pass) or keep the incumbent."""

    REVIEW_CANDIDATE = "review_candidate"
    KEEP_INCUMBENT = "keep_incumbent"


@attrs.frozen(kw_only=True, field_transformer=checked)
class SideSummary:
    """One model over every case: passes, success rate (passed ÷ all cases), measured costs."""

    passed: int
    """Cases judged correct."""
    cases: int
    """Cases in all."""
    success_rate: float
    """Passed divided by all cases."""
    replay_cost_usd: Decimal
    """Measured cost of the replays that answered (judge calls excluded)."""
    judge_cost_usd: Decimal
    cost_per_case_usd: Decimal | None
    """Replay cost per case; None unless every case was replayed."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Metering:
    """Provider calls reserved, used and returned (``reserved - used = returned`` exactly).

    ``period_start`` is the billing period the hosted meters were taken in; None when no meter
    applies (self-hosting without enforcement).
    """

    calls_reserved: int
    """Provider calls reserved before the backtest ran."""
    backtests_reserved: int
    """Backtests reserved against the plan."""
    period_start: Annotated[datetime, AwareUtc()] | None = None
    """The billing period the meters were taken in; null when no meter applies."""
    calls_used: int | None = None
    """Provider calls made."""
    calls_returned: int | None = None
    """Reserved calls given back (reserved minus used)."""
    backtests_used: int | None = None
    """Backtests counted against the plan."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestResult:
    """The decision: pass needs positive projected savings and the floor; else fail or abstain."""

    verdict: BacktestVerdict
    """The backtest's answer: pass, fail or abstain."""
    recommended_action: BacktestAction
    """What to do next: review the candidate, or keep the incumbent."""
    abstain_reasons: tuple[str, ...]
    """Why it abstained, as codes."""
    fail_reasons: tuple[str, ...]
    """Why it failed, as codes."""
    min_success_rate: float
    """The lowest success rate the candidate could have."""
    incumbent: SideSummary
    """The incumbent over every case."""
    candidate: SideSummary
    """The candidate over every case."""
    projected_savings_per_case_usd: Decimal | None
    provider_calls: int
    """How many provider calls were made."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Backtest:
    """The stored backtest record: keyed digest, method, evidence, result, metering."""

    backtest_id: str
    tenant_id: str
    status: BacktestStatus
    """Where the backtest is: queued, running or finished."""
    created_at: Annotated[datetime, AwareUtc()]
    requested_by: str
    request_digest: str
    """The keyed digest of the request."""
    digest_key_id: str
    """The id of the key the request digest was made with."""
    claim_class: str
    """What kind of claim the result makes."""
    method_version: str
    """The version of the backtest method."""
    case_count: int
    """How many cases were asked for."""
    min_success_rate: float
    """The lowest success rate the candidate may have."""
    limitations: tuple[str, ...]
    """What the result does not cover."""
    evaluation_evidence: EvaluationEvidence
    """What the result rests on: the models, the judge's rubric and each case."""
    metering: Metering
    """The provider calls reserved, used and returned."""
    preflight_abstain_reasons: tuple[str, ...] = ()
    """Reasons known before any provider call (a judge family clash, candidate settings)."""
    started_at: Annotated[datetime, AwareUtc()] | None = None
    """When a worker started it (RFC 3339, UTC)."""
    deadline_at: Annotated[datetime, AwareUtc()] | None = None
    """When it is cut short if not finished (RFC 3339, UTC)."""
    finished_at: Annotated[datetime, AwareUtc()] | None = None
    """When it finished (RFC 3339, UTC)."""
    claims: int = 0
    """How often a worker claimed it (a claim left by a dead process is taken over)."""
    result: BacktestResult | None = None
    """The verdict and the figures; null until finished."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestAccepted:
    """The answer to a new backtest request (202): where to read it."""

    backtest_id: str
    status: BacktestStatus


@attrs.frozen(kw_only=True)
class SealedInputs:
    """The request's raw text, sealed, kept only while the backtest waits or runs."""

    key_id: str
    box: bytes = attrs.field(repr=False)


__all__ = [
    "CLAIM_CLASS",
    "DEFAULT_REPLAY_MAX_TOKENS",
    "EVALUATOR_VERSION",
    "JUDGE_MAX_TOKENS",
    "JUDGE_PARAMETER",
    "MAX_CASES",
    "METHOD_VERSION",
    "MIN_CASES",
    "RESOLVED",
    "RUBRIC",
    "Backtest",
    "BacktestAccepted",
    "BacktestAction",
    "BacktestCase",
    "BacktestConstraints",
    "BacktestRequest",
    "BacktestResult",
    "BacktestStatus",
    "BacktestVerdict",
    "CaseOutcome",
    "CaseVerdict",
    "EvaluationEvidence",
    "Metering",
    "ReplayModel",
    "ResolvedModel",
    "SealedInputs",
    "SideObservation",
    "SideSummary",
]
