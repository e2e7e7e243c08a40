"""The transparency log as readers see it: checkpoints, tiles, proofs and the public keys.

Every read is of one tenant's log. A tree size asked about must be one the log has reached;
proofs are computed from the stored tiles (:mod:`ecp_core.transparency.proofs`).
"""

from collections.abc import Callable
from datetime import datetime

import attrs

from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.ports.transparency import TransparencyUnit
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.keys import LogKeys
from ecp_core.transparency.merkle import (
    EMPTY_ROOT,
    consistency_proof,
    inclusion_proof,
    range_proof,
)
from ecp_core.transparency.model import LoggedLeaf, LogHead
from ecp_core.transparency.notes import NoteKey
from ecp_core.transparency.proofs import with_tiles
from ecp_core.transparency.tiles import TileName, tile_width


@attrs.frozen
class InclusionProof:
    """Where a record's leaf is, in which tree, and the hashes that prove it (leaf end first)."""

    audit_id: str
    leaf_index: int
    tree_size: int
    hashes: tuple[bytes, ...]


MAX_SPAN_LEAVES = 50_000
"""Leaves one span (an audit export) may hold; a wider window is refused, never cut."""


@attrs.frozen
class LogSpan:
    """The leaves appended between two checkpoints, and the proofs that tie them to both."""

    start: LogHead | None
    """The newest checkpoint signed at or before the window's start (None: the log's start)."""
    end: LogHead
    """The oldest checkpoint signed at or after the window's end, else the newest."""
    leaves: tuple[LoggedLeaf | None, ...]
    """The leaf at each index from the start's size to the end's (None: no row names it)."""
    range_hashes: tuple[bytes, ...]
    """With the leaves' hashes, the end's root (:func:`~ecp_core.transparency.merkle.range_proof`)."""
    consistency: tuple[bytes, ...]
    """The proof that the start's tree is a prefix of the end's."""

    @property
    def first(self) -> int:
        """The index of the span's first leaf."""
        return 0 if self.start is None else self.start.size


def _beyond(field: str, size: int, reached: int) -> ValidationFailed:
    return ValidationFailed(
        f"the log has {reached} leaves; {field} {size} is beyond it",
        errors=[FieldError((field,), f"at most {reached}")],
    )


@attrs.frozen
class TransparencyLog:
    """Reads of the tenants' logs."""

    unit_of_work: Callable[[], TransparencyUnit]
    keys: LogKeys

    def checkpoint(self, tenant_id: str) -> str:
        """The newest signed checkpoint (an empty log's is signed when asked for)."""
        with self.unit_of_work() as uow:
            head = uow.transparency.head(tenant_id)
        if head is not None:
            return head.note
        text = Checkpoint(self.keys.origin_of(tenant_id), 0, EMPTY_ROOT).text()
        return text + "\n" + self.keys.signer(tenant_id).signature_line(text)

    def size(self, tenant_id: str) -> int:
        """How many leaves the tenant's newest checkpoint covers."""
        with self.unit_of_work() as uow:
            head = uow.transparency.head(tenant_id)
        return head.size if head else 0

    def tile(self, tenant_id: str, name: TileName) -> bytes:
        """A tile the newest checkpoint needs (a partial one of any width up to the stored).

        NotFound for a tile the log does not have at that width.
        """
        with self.unit_of_work() as uow:
            head = uow.transparency.head(tenant_id)
            size = head.size if head else 0
            if tile_width(size, name.level, name.index) < name.width:
                raise NotFound(f"the log has no {name.path()}")
            stored = uow.transparency.tiles(tenant_id, [(name.level, name.index)])
        return stored[(name.level, name.index)][: name.width * 32]

    def inclusion(self, tenant_id: str, audit_id: str, tree_size: int | None) -> InclusionProof:
        """The inclusion proof of an audit record in the tree of ``tree_size`` (the newest)."""
        with self.unit_of_work() as uow:
            log = uow.transparency
            leaf = log.leaves(tenant_id, [audit_id]).get(audit_id)
            reached = self._reached(uow, tenant_id)
            size = reached if tree_size is None else tree_size
            if size > reached:
                raise _beyond("tree_size", size, reached)
            if leaf is None:
                raise NotFound(f"audit record {audit_id} is not in the log (yet)")
            if leaf.leaf_index >= size:
                raise ValidationFailed(
                    f"record {audit_id} is leaf {leaf.leaf_index}, after a tree of {size}",
                    errors=[FieldError(("tree_size",), f"more than {leaf.leaf_index}")],
                )
            hashes = with_tiles(
                lambda keys: log.tiles(tenant_id, keys),
                lambda perfect: inclusion_proof(leaf.leaf_index, size, perfect),
            )
        return InclusionProof(audit_id, leaf.leaf_index, size, tuple(hashes))

    def inclusions(self, tenant_id: str, audit_ids: list[str]) -> tuple[int, list[InclusionProof]]:
        """The newest size and the inclusion proof of each record logged (others left out)."""
        with self.unit_of_work() as uow:
            log = uow.transparency
            size = self._reached(uow, tenant_id)
            leaves = log.leaves(tenant_id, audit_ids)
            placed = [leaves[a] for a in audit_ids if a in leaves and leaves[a].leaf_index < size]
            proofs = with_tiles(
                lambda keys: log.tiles(tenant_id, keys),
                lambda perfect: [inclusion_proof(p.leaf_index, size, perfect) for p in placed],
            )
        return size, [
            InclusionProof(p.audit_id, p.leaf_index, size, tuple(h))
            for p, h in zip(placed, proofs, strict=True)
        ]

    def consistency(self, tenant_id: str, first: int, second: int) -> tuple[bytes, ...]:
        """The proof that the tree of ``first`` leaves is a prefix of the tree of ``second``."""
        if first > second:
            raise ValidationFailed(
                "from is after to", errors=[FieldError(("from",), f"at most {second}")]
            )
        with self.unit_of_work() as uow:
            log = uow.transparency
            reached = self._reached(uow, tenant_id)
            if second > reached:
                raise _beyond("to", second, reached)
            hashes = with_tiles(
                lambda keys: log.tiles(tenant_id, keys),
                lambda perfect: consistency_proof(first, second, perfect),
            )
        return tuple(hashes)

    def span(self, tenant_id: str, since: datetime, until: datetime) -> LogSpan | None:
        """The leaves between the checkpoints around ``[since, until)``; None for an empty log.

        Every record committed in the window is in the span: a record is in the first
        checkpoint signed after its commit, and none in the one signed before the window.
        """
        with self.unit_of_work() as uow:
            log = uow.transparency
            newest = log.head(tenant_id)
            if newest is None:
                return None
            start = log.head_before(tenant_id, since)
            end = log.head_after(tenant_id, until) or newest
            first = 0 if start is None else start.size
            if end.size - first > MAX_SPAN_LEAVES:
                raise ValidationFailed(
                    f"the window spans {end.size - first} log leaves; an export holds at most"
                    f" {MAX_SPAN_LEAVES}: narrow it",
                    errors=[FieldError(("until",), "an earlier end or a later start")],
                )
            stored = {
                leaf.leaf_index: leaf for leaf in log.leaves_between(tenant_id, first, end.size)
            }
            hashes, consistency = with_tiles(
                lambda keys: log.tiles(tenant_id, keys),
                lambda perfect: (
                    range_proof(first, end.size, end.size, perfect) if end.size > first else [],
                    consistency_proof(first, end.size, perfect),
                ),
            )
        leaves = tuple(stored.get(index) for index in range(first, end.size))
        return LogSpan(start, end, leaves, tuple(hashes), tuple(consistency))

    def head(self, tenant_id: str) -> LogHead | None:
        """The tenant's newest signed head (None before its first checkpoint)."""
        with self.unit_of_work() as uow:
            return uow.transparency.head(tenant_id)

    def cosign(self, tenant_id: str, size: int, note: str) -> None:
        """Keep ``note`` (the head of ``size``'s note with witnesses' cosignatures added)."""
        with self.unit_of_work() as uow:
            uow.transparency.cosign(tenant_id, size, note)
            uow.commit()

    def public_keys(self, tenant_id: str) -> list[NoteKey]:
        """The keys that verify the tenant's checkpoints, the current one first."""
        return self.keys.verifiers(tenant_id)

    @staticmethod
    def _reached(uow: TransparencyUnit, tenant_id: str) -> int:
        head = uow.transparency.head(tenant_id)
        return head.size if head else 0


__all__ = ["MAX_SPAN_LEAVES", "InclusionProof", "LogSpan", "TransparencyLog"]
