"""Backtests in memory: records by id, sealed requests by id until the backtest finishes."""

from collections.abc import Sequence
from datetime import datetime

from ecp_core.backtests.model import Backtest, BacktestStatus, SealedInputs
from ecp_core.errors import Conflict, exists
from ecp_core.memory.tables import Repository, detached

BACKTESTS = "backtests"
INPUTS = "backtest_inputs"


def _calls(backtest: Backtest) -> int:
    metering = backtest.metering
    if backtest.status is BacktestStatus.FINISHED and metering.calls_used is not None:
        return metering.calls_used
    return metering.calls_reserved


class MemoryBacktests(Repository):
    """BacktestRepository in memory (a memory unit of work holds the whole store)."""

    def lock_tenant(self, tenant_id: str) -> None:
        """Nothing to do: a memory unit of work holds the whole store."""

    @detached
    def find(self, tenant_id: str, digests: Sequence[str]) -> Backtest | None:
        """The tenant's backtest whose request digest is one of ``digests``, or None."""
        for backtest in self._t.table(BACKTESTS).values():
            if backtest.tenant_id == tenant_id and backtest.request_digest in digests:
                found: Backtest = backtest
                return found
        return None

    def add(self, backtest: Backtest, inputs: SealedInputs) -> None:
        """Store a new backtest with its sealed request."""
        if backtest.backtest_id in self._t.table(BACKTESTS):
            raise exists("backtest", backtest.backtest_id)
        if self.find(backtest.tenant_id, [backtest.request_digest]) is not None:
            raise Conflict("this backtest request is stored already")
        self._t.put(BACKTESTS, backtest.backtest_id, backtest)
        self._t.put(INPUTS, backtest.backtest_id, inputs)

    @detached
    def get(self, tenant_id: str, backtest_id: str, *, lock: bool = False) -> Backtest | None:  # noqa: ARG002 - the store is held whole
        """One of the tenant's backtests."""
        found: Backtest | None = self._t.table(BACKTESTS).get(backtest_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    @detached
    def page(
        self, tenant_id: str, *, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Backtest]:
        """Backtests newest first by (created_at, backtest_id)."""
        mine = sorted(
            (b for b in self._t.table(BACKTESTS).values() if b.tenant_id == tenant_id),
            key=lambda b: (b.created_at, b.backtest_id),
            reverse=True,
        )
        if before is not None:
            mine = [b for b in mine if (b.created_at, b.backtest_id) < before]
        return mine[:limit]

    def calls_since(self, tenant_id: str, since: datetime) -> int:
        """Provider calls of the tenant's backtests created at or after ``since``."""
        return sum(
            _calls(b)
            for b in self._t.table(BACKTESTS).values()
            if b.tenant_id == tenant_id and b.created_at >= since
        )

    @detached
    def claim(self, stale_before: datetime) -> tuple[Backtest, SealedInputs | None] | None:
        """The oldest queued backtest, or a running one whose deadline is before ``stale_before``."""
        ready = sorted(
            (
                b
                for b in self._t.table(BACKTESTS).values()
                if b.status is BacktestStatus.QUEUED
                or (
                    b.status is BacktestStatus.RUNNING
                    and b.deadline_at is not None
                    and b.deadline_at < stale_before
                )
            ),
            key=lambda b: (b.created_at, b.backtest_id),
        )
        if not ready:
            return None
        return ready[0], self._t.table(INPUTS).get(ready[0].backtest_id)

    def save(self, backtest: Backtest) -> None:
        """Replace a stored backtest."""
        self._t.put(BACKTESTS, backtest.backtest_id, backtest)

    def drop_inputs(self, backtest_id: str) -> None:
        """Forget the sealed request."""
        self._t.remove(INPUTS, backtest_id)


__all__ = ["MemoryBacktests"]
