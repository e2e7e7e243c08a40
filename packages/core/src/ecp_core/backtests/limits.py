"""The bounds of backtests: the deadline, the call timeout, and the self-hosting call caps."""

from datetime import datetime, time, timedelta

import attrs

from ecp_core.backtests.digest import DigestKeys
from ecp_core.entitlements.model import Meter
from ecp_core.errors import QuotaExhausted
from ecp_core.ports.models import ModelProvider


@attrs.frozen(kw_only=True)
class BacktestLimits:
    """Bounds of execution and, for self-hosters, of provider calls (None: no cap)."""

    deadline_seconds: float = 600.0
    call_timeout_seconds: float = 60.0
    max_calls_per_backtest: int | None = None
    max_calls_per_day: int | None = None
    """Per tenant and UTC day, counted over the backtests requested that day."""
    takeover_seconds: float = 120.0
    """How long after its deadline a running backtest is taken over (its worker is gone)."""


@attrs.frozen(kw_only=True)
class BacktestSetup:
    """What backtests run with: the provider, the digest keys and the limits."""

    provider: ModelProvider
    keys: DigestKeys
    limits: BacktestLimits = attrs.field(factory=BacktestLimits)


def day_start(now: datetime) -> datetime:
    """The start of ``now``'s UTC day."""
    return datetime.combine(now.date(), time(), tzinfo=now.tzinfo)


def refuse_past_daily_cap(used: int, reserved: int, cap: int, now: datetime) -> None:
    """QuotaExhausted (429, ``Retry-After`` to midnight UTC) when ``reserved`` more passes ``cap``."""
    if used + reserved > cap:
        midnight = day_start(now) + timedelta(days=1)
        raise QuotaExhausted(
            f"the daily provider-call cap of this server is reached: {used} of {cap} used",
            meter=Meter.PROVIDER_CALL_CREDITS,
            retry_after_seconds=max(1, int((midnight - now).total_seconds())),
        )


__all__ = ["BacktestLimits", "BacktestSetup", "day_start", "refuse_past_daily_cap"]
