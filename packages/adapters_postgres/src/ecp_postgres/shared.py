"""A transaction shared by several units of work, each in a savepoint (ADR 0102).

:class:`SharedPostgresTransaction` is a unit of work on one pooled connection whose
:meth:`~SharedPostgresTransaction.unit` hands out :class:`SavepointUnit` s, one at a time: each
opens a savepoint; its ``commit`` sends its queued writes (the savepoint stays, hidden by the next
one of the same name); leaving it without commit forgets its queued writes and reads, and rolls
back to the savepoint, so only its own work is undone. The shared transaction's own commit makes
every kept unit durable at once.
"""

from collections.abc import Callable
from types import TracebackType
from typing import Self

from ecp_postgres.errors import unavailable
from ecp_postgres.graphs import GraphCache
from ecp_postgres.session import UnitConnection
from ecp_postgres.unit import PostgresUnitOfWork

SAVEPOINT = "ecp_unit"
"""The savepoint's name: units run one after another, so one name serves them all."""


class SavepointUnit(PostgresUnitOfWork):
    """A unit of work in a savepoint of a shared transaction (see the module).

    What it does after its ``commit`` belongs to the shared transaction without a savepoint;
    a caller commits last.
    """

    def __init__(self, conn: UnitConnection, graph_cache: GraphCache) -> None:  # noqa: D107
        self._conn = conn
        self._graph_cache = graph_cache
        self._kept = False

    def __enter__(self) -> Self:
        """Open the unit's savepoint (after the writes queued before it)."""
        self._run(f"SAVEPOINT {SAVEPOINT}")
        return self

    def commit(self) -> None:
        """Keep the unit's work: send its queued writes.

        Its savepoint is not released (a statement less): the next unit's savepoint of the same
        name hides it, and the shared commit keeps them all.
        """
        self._guarded(self._conn.flush)
        self._kept = True

    def _run(self, statement: str) -> None:
        """Send ``statement``; a lost database is raised as DatabaseUnavailable."""
        self._guarded(lambda: self._conn.execute(statement))

    def _guarded(self, call: Callable[[], object]) -> None:
        """Make ``call``; a lost database is raised as DatabaseUnavailable."""
        try:
            call()
        except Exception as failed:
            translated = unavailable(failed, self._conn)
            if translated is None:
                raise
            raise translated from failed

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Undo what was not kept (only this unit's work); a lost database is raised as such."""
        conn = self._conn
        if not self._kept:
            conn.pending.discard()
            conn.memo.clear()
            self._guarded(lambda: conn.roll_back_to(SAVEPOINT))
            self._run(f"RELEASE SAVEPOINT {SAVEPOINT}")
        translated = None if exc is None else unavailable(exc, conn)
        if translated is not None:
            raise translated from exc


class SharedPostgresTransaction(PostgresUnitOfWork):
    """One transaction whose units of work are savepoints (see the module)."""

    def unit(self) -> SavepointUnit:
        """A unit of work in a savepoint of this transaction; use one at a time."""
        return SavepointUnit(self._conn, self._graph_cache)


__all__ = ["SAVEPOINT", "SavepointUnit", "SharedPostgresTransaction"]
