"""Storage port of the transparency log: pending leaves, the tree's tiles and signed heads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from ecp_core.transparency.model import LoggedLeaf, LogHead, PendingLeaf
    from ecp_core.transparency.tiles import TileKey


class TransparencyRepository(Protocol):
    """Per-tenant Merkle logs over audit records, appended by an integrator.

    Every audit record a store appends is also queued as a pending leaf of its tenant's log, in
    the same transaction; the integrator moves pending leaves into the log in the order it
    takes them (which follows commit order: an uncommitted record is not seen yet).
    """

    def tenants_pending(self, limit: int) -> list[str]:
        """Up to ``limit`` tenants with pending leaves, in tenant id order."""
        ...

    def lock(self, tenant_id: str, *, wait: bool = False) -> bool:
        """Take the tenant's log for this transaction; False when another holds it.

        With ``wait``, wait for the holder to end instead (then always True).
        """
        ...

    def pending(self, tenant_id: str, limit: int) -> list[PendingLeaf]:
        """Up to ``limit`` of the tenant's pending leaves, oldest queued first."""
        ...

    def head(self, tenant_id: str) -> LogHead | None:
        """The tenant's newest signed checkpoint, or None before the first."""
        ...

    def head_at(self, tenant_id: str, size: int) -> LogHead | None:
        """The tenant's signed checkpoint of exactly ``size`` leaves, or None."""
        ...

    def tiles(self, tenant_id: str, keys: Iterable[TileKey]) -> dict[TileKey, bytes]:
        """The stored (newest) version of each tile asked for that exists."""
        ...

    def append(
        self,
        tenant_id: str,
        start: int,
        leaves: Sequence[PendingLeaf],
        tiles: Mapping[TileKey, bytes],
        head: LogHead,
    ) -> None:
        """Log ``leaves`` from index ``start`` on, store ``tiles`` and the new ``head``.

        The leaves leave the pending queue. Conflict when ``start`` is not the log's size.
        """
        ...

    def leaves(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, LoggedLeaf]:
        """Where each of the records is in the log (records not yet logged are left out)."""
        ...

    def leaves_between(self, tenant_id: str, start: int, end: int) -> list[LoggedLeaf]:
        """The logged leaves at indices ``[start, end)``, in index order."""
        ...

    def head_before(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The newest head signed at or before ``instant``, or None."""
        ...

    def head_after(self, tenant_id: str, instant: datetime) -> LogHead | None:
        """The oldest head signed at or after ``instant``, or None."""
        ...

    def cosign(self, tenant_id: str, size: int, note: str) -> None:
        """Replace the note of the head of ``size`` by ``note``: the same note, cosigned."""
        ...


class WitnessClient(Protocol):
    """Submits a checkpoint to a witness (C2SP tlog-witness ``add-checkpoint``)."""

    def add_checkpoint(self, url: str, body: str) -> tuple[int | None, str]:
        """The witness's status and body; None and the error when it could not be reached."""
        ...


class WithTransparency(Protocol):
    """A unit of work that reaches the transparency logs."""

    @property
    def transparency(self) -> TransparencyRepository:
        """The transparency logs."""
        ...


class TransparencyUnit(Transaction, WithTransparency, Protocol):
    """What the transparency log's use cases need of storage."""


__all__ = ["TransparencyRepository", "TransparencyUnit", "WithTransparency", "WitnessClient"]
