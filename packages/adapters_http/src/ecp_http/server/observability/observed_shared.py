"""A watched shared transaction: its savepoints' work counted once the whole commits (ADR 0102)."""

from types import TracebackType
from typing import TYPE_CHECKING, Self

from ecp_http.server.observability.observed import ObservedUnitOfWork

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecp_core.ports.shared import SharedTransaction, SharedTransactions
    from ecp_core.ports.unit_of_work import UnitOfWork
    from ecp_http.server.observability.metrics import Metrics
    from ecp_http.server.observability.tracing import Tracing
    from ecp_http.server.observability.watched import Seen


class ObservedSharedTransaction:
    """A shared transaction whose savepoint units are watched, reported once it commits.

    Each unit is an :class:`ObservedUnitOfWork` whose report waits for the shared commit, so
    nothing is counted or logged that did not become durable.
    """

    def __init__(
        self,
        inner: "SharedTransaction",
        metrics: "Metrics | None",
        tracing: "Tracing | None",
        on_audit: "Callable[[], object] | None" = None,
    ) -> None:
        """Watch ``inner``'s units (``on_audit``: as :class:`ObservedUnitOfWork`'s)."""
        self._inner = inner
        self._metrics = metrics
        self._tracing = tracing
        self._on_audit = on_audit
        self._kept: list[tuple[ObservedUnitOfWork, Seen]] = []

    def __enter__(self) -> Self:
        """Begin the shared transaction."""
        self._inner = self._inner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Forget what was not committed and leave the shared transaction."""
        self._kept = []
        self._inner.__exit__(exc_type, exc, tb)

    def unit(self) -> ObservedUnitOfWork:
        """A watched unit of work in a savepoint; its report waits for :meth:`commit`."""
        inner: UnitOfWork = self._inner.unit()  # type: ignore[assignment]
        return ObservedUnitOfWork(
            inner, self._metrics, self._tracing, self._on_audit, deferred=self._kept
        )

    def commit(self) -> None:
        """Commit, then settle what each kept unit did (cue, count, log)."""
        self._inner.commit()
        kept, self._kept = self._kept, []
        for unit, seen in kept:
            unit.committed(seen)


def observed_shared(
    factory: "SharedTransactions",
    metrics: "Metrics | None",
    tracing: "Tracing | None" = None,
    on_audit: "Callable[[], object] | None" = None,
) -> "SharedTransactions":
    """A factory of watched shared transactions over ``factory``."""

    def shared_transaction() -> "SharedTransaction":
        return ObservedSharedTransaction(factory(), metrics, tracing, on_audit)

    return shared_transaction


__all__ = ["ObservedSharedTransaction", "observed_shared"]
