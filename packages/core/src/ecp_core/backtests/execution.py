"""Replaying a backtest's cases against the model provider, bounded per call and in total.

Each case costs at most 4 provider calls: the incumbent's replay and its judgement, then the
candidate's. Every call runs on a worker thread and is waited for no longer than the
backtest's deadline leaves, so a hanging provider cannot hold a backtest past it; the call's own
timeout (``BacktestLimits.call_timeout_seconds``) is also cut to what is left. A call cut by the
deadline is a ``replay_error`` (or ``judge_error``) with failure ``deadline``; a call not
started because the deadline had passed is ``not_run``. Failures keep only their kind.
"""

import concurrent.futures
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import attrs

from ecp_core.backtests.model import (
    DEFAULT_REPLAY_MAX_TOKENS,
    JUDGE_MAX_TOKENS,
    BacktestRequest,
    CaseOutcome,
    CaseVerdict,
    SideObservation,
)
from ecp_core.backtests.rules import JUDGE_RUBRIC, judge_prompt, read_judgement
from ecp_core.errors import ModelCallFailed, NotFound
from ecp_core.models.model import ChatMessage, ModelAnswer, ModelRequest
from ecp_core.ports.models import ModelProvider
from ecp_core.ports.system import Clock

log = logging.getLogger("ecp_core.backtests")

DEADLINE = "deadline"
"""Failure kind of a call the backtest's deadline cut."""
JUDGE_ANSWER = "judge_answer"
"""Failure kind of a judge answer that holds no readable verdict."""


class Calls:
    """Provider calls of one backtest, bounded by its deadline; counts the calls it made."""

    def __init__(
        self,
        provider: ModelProvider,
        clock: Clock,
        *,
        timeout_seconds: float,
        deadline: datetime,
        pool: concurrent.futures.Executor,
    ) -> None:
        """Call ``provider`` on ``pool``, each call within ``timeout_seconds`` and ``deadline``."""
        self._provider = provider
        self._clock = clock
        self._timeout = timeout_seconds
        self._deadline = deadline
        self._pool = pool
        self.made = 0

    def ask(self, request: ModelRequest) -> ModelAnswer | str | None:
        """The answer, the failure kind, or None when the deadline had passed (no call)."""
        remaining = (self._deadline - self._clock.now()).total_seconds()
        if remaining <= 0:
            return None
        self.made += 1
        future = self._pool.submit(
            self._provider.call, request, timeout_seconds=min(self._timeout, remaining)
        )
        try:
            return future.result(timeout=remaining)
        except ModelCallFailed as failed:
            return failed.failure
        except NotFound:
            return "unknown_model"
        except TimeoutError:
            return DEADLINE
        except Exception as exc:  # noqa: BLE001 - any adapter fault is this call's failure
            log.warning(
                "a provider call raised", extra={"error_type": type(exc).__name__}
            )  # the type only: exception text may quote the case
            return "provider_error"


@contextmanager
def calls_until(
    provider: ModelProvider, clock: Clock, *, timeout_seconds: float, deadline: datetime
) -> Iterator[Calls]:
    """:class:`Calls` on a thread of their own; a call cut by the deadline is left behind."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ecp-backtest")
    try:
        yield Calls(provider, clock, timeout_seconds=timeout_seconds, deadline=deadline, pool=pool)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _replay(request: BacktestRequest, index: int, model: str) -> ModelRequest:
    settings = request.incumbent  # the candidate changes the model only
    return ModelRequest(
        model_ref=model,
        messages=(
            ChatMessage(role="system", content=request.instruction),
            ChatMessage(role="user", content=request.cases[index].input),
        ),
        max_tokens=settings.max_tokens or DEFAULT_REPLAY_MAX_TOKENS,
        temperature=settings.temperature,
    )


def _judgement(request: BacktestRequest, index: int, output: str) -> ModelRequest:
    case = request.cases[index]
    return ModelRequest(
        model_ref=request.judge,
        messages=(
            ChatMessage(role="system", content=JUDGE_RUBRIC),
            ChatMessage(
                role="user",
                content=judge_prompt(request.instruction, case.input, case.expected, output),
            ),
        ),
        max_tokens=JUDGE_MAX_TOKENS,
        temperature=0,
    )


def _side(calls: Calls, request: BacktestRequest, index: int, model: str) -> SideObservation:
    replay = calls.ask(_replay(request, index, model))
    if replay is None:
        return SideObservation(verdict=CaseVerdict.NOT_RUN, value=None, calls=0)
    if isinstance(replay, str):
        return SideObservation(
            verdict=CaseVerdict.REPLAY_ERROR, value=None, calls=1, failure=replay
        )
    replayed = SideObservation(
        verdict=CaseVerdict.JUDGE_ERROR,
        value=None,
        calls=1,
        failure=DEADLINE,
        replay_input_tokens=replay.usage.input_tokens,
        replay_output_tokens=replay.usage.output_tokens,
        replay_cost_usd=replay.cost_usd,
    )
    judged = calls.ask(_judgement(request, index, replay.text))
    if judged is None:
        return replayed  # the deadline passed before the judge was asked
    if isinstance(judged, str):
        return attrs.evolve(replayed, calls=2, failure=judged)
    verdict = read_judgement(judged.text)
    return attrs.evolve(
        replayed,
        verdict=verdict or CaseVerdict.JUDGE_ERROR,
        value=None if verdict is None else verdict.value_of,
        calls=2,
        judge_input_tokens=judged.usage.input_tokens,
        judge_output_tokens=judged.usage.output_tokens,
        judge_cost_usd=judged.cost_usd,
        failure=None if verdict is not None else JUDGE_ANSWER,
    )


def run_case(calls: Calls, request: BacktestRequest, index: int) -> CaseOutcome:
    """Replay and judge case ``index`` on both sides (at most 4 calls)."""
    return CaseOutcome(
        case_index=index,
        incumbent=_side(calls, request, index, request.incumbent.model),
        candidate=_side(calls, request, index, request.candidate.model),
    )


__all__ = ["DEADLINE", "JUDGE_ANSWER", "Calls", "calls_until", "run_case"]
