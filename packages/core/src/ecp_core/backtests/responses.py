"""What the backtest routes answer: the stored record plus what is derived from it on read."""

import attrs

from ecp_core.backtests.candidates import CandidateOutcome, candidate_outcomes
from ecp_core.backtests.model import Backtest


@attrs.frozen(kw_only=True)
class BacktestResponse(Backtest):
    """A backtest as the API shows it: the stored record and, once finished, ``candidates``.

    ``candidates`` is the incumbent's :class:`CandidateOutcome`, then the candidate's, derived
    from the stored result and evidence on every read; null while queued or running.
    """

    candidates: tuple[CandidateOutcome, CandidateOutcome] | None = None
    """The incumbent's outcome, then the candidate's; null until finished."""

    @classmethod
    def of(cls, backtest: Backtest) -> "BacktestResponse":
        """Show ``backtest`` with its derived candidate outcomes."""
        fields = {field.name: getattr(backtest, field.name) for field in attrs.fields(Backtest)}
        return cls(**fields, candidates=candidate_outcomes(backtest))


@attrs.frozen(kw_only=True)
class BacktestListResponse:
    """A page of the tenant's backtests, newest first, as the API shows them."""

    backtests: tuple[BacktestResponse, ...]
    """One page of the tenant's backtests, newest first."""
    next_cursor: str | None = None


__all__ = ["BacktestListResponse", "BacktestResponse"]
