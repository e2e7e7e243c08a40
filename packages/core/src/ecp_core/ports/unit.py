"""The transaction every unit of work is: leave without :meth:`commit` and it rolls back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from types import TracebackType


class Transaction(Protocol):
    """One transaction: everything done through it commits together or not at all."""

    def __enter__(self) -> Self:
        """Begin."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back what was not committed and release."""
        ...

    def commit(self) -> None:
        """Make everything done so far durable."""
        ...


__all__ = ["Transaction"]
