"""The backtest port: stored backtests, their sealed inputs while they wait or run, and claims."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.billing import WithSubscriptions
from ecp_core.ports.entitlements import WithMeters
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from ecp_core.backtests.model import Backtest, SealedInputs


class BacktestRepository(Protocol):
    """Backtest records (numbers only) and, until each finishes, its sealed request."""

    def lock_tenant(self, tenant_id: str) -> None:
        """Serialize the tenant's new backtests until the unit of work ends.

        Two identical requests then find each other, and a daily cap counts one after another.
        """
        ...

    def find(self, tenant_id: str, digests: Sequence[str]) -> Backtest | None:
        """The tenant's backtest whose request digest is one of ``digests``, or None."""
        ...

    def add(self, backtest: Backtest, inputs: SealedInputs) -> None:
        """Store a new backtest with its sealed request; Conflict when its digest is taken."""
        ...

    def get(self, tenant_id: str, backtest_id: str, *, lock: bool = False) -> Backtest | None:
        """One of the tenant's backtests (held until the unit of work ends with ``lock``)."""
        ...

    def page(
        self, tenant_id: str, *, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Backtest]:
        """Backtests newest first by (created_at, backtest_id), before that pair when given."""
        ...

    def calls_since(self, tenant_id: str, since: datetime) -> int:
        """Provider calls of the tenant's backtests created at or after ``since``.

        A finished backtest counts the calls it used, any other the calls it reserved.
        """
        ...

    def claim(self, stale_before: datetime) -> tuple[Backtest, SealedInputs | None] | None:
        """One backtest to run, held until the unit of work ends; None when there is none.

        A queued one, oldest first, or a running one whose deadline is before ``stale_before``
        (its worker is gone). Rows another transaction holds are skipped, so workers never
        share one. The sealed request is None once dropped.
        """
        ...

    def save(self, backtest: Backtest) -> None:
        """Replace a stored backtest (status, progress, result)."""
        ...

    def drop_inputs(self, backtest_id: str) -> None:
        """Forget the sealed request (its backtest finished)."""
        ...


class BacktestsUnit(Transaction, WithMeters, WithSubscriptions, Protocol):
    """What backtests need: their records, and the meters and subscription that pay for them."""

    @property
    def backtests(self) -> BacktestRepository:
        """The stored backtests."""
        ...


__all__ = ["BacktestRepository", "BacktestsUnit"]
