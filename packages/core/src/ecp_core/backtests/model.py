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
    expected: Annotated[str, Text(1, 100_000)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ReplayModel:
    """A model to replay the cases with, by catalog ref, and its settings.

    The incumbent's settings apply to both replays; a candidate that names any setting besides
    its model changes more than the model, and the backtest abstains (spec "Backtest rules" 3).
    """

    model: ModelRef
    max_tokens: Annotated[int, Range(1, 32_768)] | None = None
    temperature: Annotated[float, Range(0, 2)] | None = None

    @property
    def has_settings(self) -> bool:
        """Whether anything besides the model is set."""
        return self.max_tokens is not None or self.temperature is not None


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestConstraints:
    """What the candidate must show: its success-rate floor (required; zero is a choice)."""

    min_success_rate: Annotated[float, Range(0, 1)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestRequest:
    """Body of ``POST /v1/backtests``: the instruction, 5 to 25 cases, the models, the floor."""

    instruction: Annotated[str, Text(1, 100_000)]
    """The workflow instruction: the system prompt of every replay."""
    cases: Annotated[tuple[BacktestCase, ...], Items(MIN_CASES, MAX_CASES)]
    incumbent: ReplayModel
    candidate: ReplayModel
    judge: ModelRef
    constraints: BacktestConstraints


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
    value: int | None
    calls: Annotated[int, Range(0, 2)]
    replay_input_tokens: int | None = None
    replay_output_tokens: int | None = None
    replay_cost_usd: Decimal | None = None
    judge_input_tokens: int | None = None
    judge_output_tokens: int | None = None
    judge_cost_usd: Decimal | None = None
    failure: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CaseOutcome:
    """Incumbent and candidate on one case, paired by zero-based ``case_index``."""

    case_index: Annotated[int, Range(0, MAX_CASES - 1)]
    incumbent: SideObservation
    candidate: SideObservation


@attrs.frozen(kw_only=True, field_transformer=checked)
class ResolvedModel:
    """A model ref as the catalog resolved it when the backtest was requested."""

    model_ref: str
    provider: str
    model: str
    family: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class EvaluationEvidence:
    """What the result rests on: the models, the judge's rubric and the per-case outcomes."""

    incumbent: ResolvedModel
    candidate: ResolvedModel
    judge: ResolvedModel
    evaluator_version: str
    rubric: str
    rubric_hash: str
    judge_parameter: str
    cases: tuple[CaseOutcome, ...] = ()


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
    cases: int
    success_rate: float
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
    backtests_reserved: int
    period_start: Annotated[datetime, AwareUtc()] | None = None
    calls_used: int | None = None
    calls_returned: int | None = None
    backtests_used: int | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class BacktestResult:
    """The decision: pass needs positive projected savings and the floor; else fail or abstain."""

    verdict: BacktestVerdict
    recommended_action: BacktestAction
    abstain_reasons: tuple[str, ...]
    fail_reasons: tuple[str, ...]
    min_success_rate: float
    incumbent: SideSummary
    candidate: SideSummary
    projected_savings_per_case_usd: Decimal | None
    provider_calls: int


@attrs.frozen(kw_only=True, field_transformer=checked)
class Backtest:
    """The stored backtest record: keyed digest, method, evidence, result, metering."""

    backtest_id: str
    tenant_id: str
    status: BacktestStatus
    created_at: Annotated[datetime, AwareUtc()]
    requested_by: str
    request_digest: str
    digest_key_id: str
    claim_class: str
    method_version: str
    case_count: int
    min_success_rate: float
    limitations: tuple[str, ...]
    evaluation_evidence: EvaluationEvidence
    metering: Metering
    preflight_abstain_reasons: tuple[str, ...] = ()
    """Reasons known before any provider call (a judge family clash, candidate settings)."""
    started_at: Annotated[datetime, AwareUtc()] | None = None
    deadline_at: Annotated[datetime, AwareUtc()] | None = None
    finished_at: Annotated[datetime, AwareUtc()] | None = None
    claims: int = 0
    """How often a worker claimed it (a claim left by a dead process is taken over)."""
    result: BacktestResult | None = None


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
