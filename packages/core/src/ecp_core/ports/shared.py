"""One transaction shared by several callers' units of work, each in a savepoint (ADR 0102).

A store that can offer it (PostgreSQL) hands out a :class:`SharedTransaction`: each
:meth:`~SharedTransaction.unit` is a unit of work inside it whose ``commit`` keeps its work
(keeps its savepoint) and whose leaving without commit undoes only its own work (rolls back
to its savepoint). Nothing is durable until :meth:`~SharedTransaction.commit`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.ports.runs import RunsUnit


class SharedTransaction(Transaction, Protocol):
    """A transaction whose units of work are savepoints; leaving without commit rolls back.

    Its ``commit`` makes every kept unit's work durable at once.
    """

    def unit(self) -> RunsUnit:
        """A unit of work in its own savepoint (used as a context manager, one at a time)."""
        ...


SharedTransactions = Callable[[], SharedTransaction]
"""Makes a new shared transaction (a store's ``shared_transaction``)."""

T = TypeVar("T")


class WorkGroup(Protocol):
    """Runs callers' works in shared transactions and answers each (the engine's CommitGroup)."""

    groups: int
    """Transactions committed or tried so far (a group of one included)."""
    works: int
    """Works they held."""

    def run(self, work: Callable[[RunsUnit], T]) -> T:
        """Run ``work`` in a unit of work of a shared transaction; its result once committed."""
        ...


__all__ = ["SharedTransaction", "SharedTransactions", "WorkGroup"]
