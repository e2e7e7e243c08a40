"""Group commit: concurrent callers' units of work share one transaction (ADR 0102).

Under load many runs start at once, and each start's commit is a durable flush of its own
(about 0.7 ms here, whatever it holds). A :class:`CommitGroup` lets them share it: a caller hands
in its work and waits; the first caller that finds nobody leading becomes the leader, takes every
work waiting (up to :data:`MAX_GROUP`), runs each in its own savepoint of one transaction, commits
once, and answers each caller: its result, or its own error (its savepoint rolled back, the
others kept), or the commit's error for everyone whose work was kept. A caller is answered only
after the shared commit, so nothing is acknowledged that is not durable. Alone, a caller leads
its own group of one straight away: no waiting is added when there is no load, and (given a
plain unit of work for it) no savepoint either.

The works run one after another on the leader's thread, each in the context (``contextvars``)
of the caller that handed it in, so its log lines keep the caller's request id.
"""

import contextvars
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar, cast

from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.shared import SharedTransactions

log = logging.getLogger("ecp_core.runs")

MAX_GROUP = 32
"""The most works one shared transaction takes."""

T = TypeVar("T")


class _Work(Generic[T]):
    """One caller's work, its outcome, and what its caller waits for."""

    def __init__(self, work: Callable[[RunsUnit], T]) -> None:
        self.work = work
        self.context = contextvars.copy_context()
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False
        """Answered: the result or the error is final."""
        self.lead = False
        """This caller is to lead the next group."""
        self.wake = threading.Event()
        """Set when ``done`` or ``lead`` is."""


class CommitGroup:
    """Runs callers' works in shared transactions, one savepoint each (see the module)."""

    def __init__(
        self,
        transactions: SharedTransactions,
        *,
        max_group: int = MAX_GROUP,
        alone: Callable[[], RunsUnit] | None = None,
    ) -> None:
        """Share transactions made by ``transactions``, at most ``max_group`` works in one.

        ``alone`` makes the plain unit of work a group of one runs in: nothing to share, so no
        savepoint (two statements fewer); None runs it in a shared transaction too.
        """
        self._transactions = transactions
        self._max_group = max_group
        self._alone = alone
        self._lock = threading.Lock()
        self._waiting: deque[_Work[object]] = deque()
        self._leading = False
        self.groups = 0
        """Shared transactions committed or tried so far."""
        self.works = 0
        """Works they held."""

    @property
    def waiting(self) -> int:
        """Works handed in and not yet taken into a group."""
        with self._lock:
            return len(self._waiting)

    def run(self, work: Callable[[RunsUnit], T]) -> T:
        """Run ``work`` in a unit of work of a shared transaction; its result once committed.

        ``work`` calls the unit's ``commit`` to keep what it did; raising (or returning without
        commit) undoes only its own work. The error it raised, or the shared commit's, is raised
        here.
        """
        mine: _Work[object] = _Work(work)
        with self._lock:
            self._waiting.append(mine)
            if not self._leading:  # nobody leads, so nothing waits before this work
                self._leading = mine.lead = True
        while not mine.done:
            if mine.lead:
                self._lead_one_group()  # this work is first in line, so in the group
            else:
                mine.wake.wait()
                mine.wake.clear()
        if mine.error is not None:
            raise mine.error
        return mine.result  # type: ignore[return-value]

    def run_together(self, works: Sequence[Callable[[RunsUnit], T]]) -> list[T | BaseException]:
        """Run ``works`` as one group led by this thread; each one's outcome, in order.

        They share one transaction (a single work runs in a plain unit), each in its own
        savepoint. An outcome is the work's result, or its own error, or the shared commit's,
        known once that commit is done. Works handed to :meth:`run` meanwhile go on in groups
        of their own, on other connections.
        """
        group: list[_Work[object]] = [_Work(work) for work in works]
        self._run_group(group)
        return cast(
            "list[T | BaseException]",
            [work.result if work.error is None else work.error for work in group],
        )

    def _lead_one_group(self) -> None:
        with self._lock:
            size = min(self._max_group, len(self._waiting))
            group = [self._waiting.popleft() for _ in range(size)]
        try:
            self._run_group(group)
        finally:
            with self._lock:
                for work in group:
                    work.done = True
                successor = self._waiting[0] if self._waiting else None
                if successor is None:
                    self._leading = False
                else:
                    successor.lead = True
            for work in [*group, *([successor] if successor else [])]:
                work.wake.set()

    def _run_group(self, group: list[_Work[object]]) -> None:
        """Run ``group``, each work's outcome set on it (never raises); then count it."""
        try:
            self._run_each(group)
        finally:
            with self._lock:
                self.groups += 1
                self.works += len(group)

    def _run_each(self, group: list[_Work[object]]) -> None:
        if len(group) == 1 and self._alone is not None:
            (work,) = group
            try:
                with self._alone() as unit:
                    work.result = work.context.run(work.work, unit)
            except BaseException as exc:  # noqa: BLE001 - the caller's own, raised there
                work.error = exc
            return
        kept = 0
        try:
            with self._transactions() as shared:
                for work in group:
                    try:
                        with shared.unit() as unit:
                            work.result = work.context.run(work.work, unit)
                        kept += 1
                    except BaseException as exc:  # noqa: BLE001 - the caller's own, raised there
                        work.error = exc
                shared.commit()
        except BaseException as exc:
            for work in group:
                if work.error is None:
                    work.result, work.error = None, exc
            log.warning(
                "a shared transaction failed",
                exc_info=exc,
                extra={"works": len(group), "kept": kept},
            )


__all__ = ["MAX_GROUP", "CommitGroup"]
