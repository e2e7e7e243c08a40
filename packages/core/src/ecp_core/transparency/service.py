"""The transparency log as readers see it: checkpoints, tiles, proofs and the public keys.

Every read is of one tenant's log. A tree size asked about must be one the log has reached;
proofs are computed from the stored tiles (:mod:`ecp_core.transparency.proofs`).
"""

from collections.abc import Callable

import attrs

from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.ports.transparency import TransparencyUnit
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.keys import LogKeys
from ecp_core.transparency.merkle import EMPTY_ROOT, consistency_proof, inclusion_proof
from ecp_core.transparency.model import LogHead
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


__all__ = ["InclusionProof", "TransparencyLog"]
