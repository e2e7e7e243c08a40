"""Queued backtests run on threads of their own, so a long one never holds up the other sweeps.

The dispatcher's sweep thread calls a :class:`BacktestWorker` every second or so; each call
claims one queued backtest on the sweep thread (so a database outage is seen and reported
there, like every sweep's) and runs it on a daemon thread of its own, unless ``concurrency``
threads are busy already. A backtest cut short by the process stopping is taken over by a
later claim once its deadline is long past (ADR 0038).
"""

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger("ecp_http.backtests")

CONCURRENCY = 2
"""Backtests one process replays at the same time."""

Claimed = TypeVar("Claimed")


class BacktestWorker(Generic[Claimed]):
    """A sweep action: ``claim`` on the sweep thread, then ``run`` the claim on its own thread."""

    def __init__(
        self,
        claim: Callable[[], Claimed | None],
        run: Callable[[Claimed], object],
        *,
        concurrency: int = CONCURRENCY,
    ) -> None:
        """Run at most ``concurrency`` claims at a time."""
        self._claim = claim
        self._run = run
        self._concurrency = concurrency
        self._busy = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        """Claim one backtest and run it on a thread of its own, unless every slot is busy.

        A claim that fails (the database is away) raises here, on the sweep thread.
        """
        with self._lock:
            if self._busy >= self._concurrency:
                return
            self._busy += 1
        try:
            claimed = self._claim()
        except BaseException:
            self._done()
            raise
        if claimed is None:
            self._done()
            return
        threading.Thread(
            target=self._work, args=(claimed,), name="ecp-backtest", daemon=True
        ).start()

    def _work(self, claimed: Claimed) -> None:
        try:
            self._run(claimed)
        except Exception:  # one failing run must not stop the next
            log.exception("backtest run failed")
        finally:
            self._done()

    def _done(self) -> None:
        with self._lock:
            self._busy -= 1


__all__ = ["CONCURRENCY", "BacktestWorker"]
