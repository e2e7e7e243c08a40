"""The integrator: moves committed audit records into their tenant's log and signs a checkpoint.

Off the request path: a server's background thread calls :meth:`LogIntegrator.integrate` every
``ECP_LOG_CHECKPOINT_SECONDS``. Each tenant's pass is one transaction under the tenant's log lock
(another process holding it is skipped, not waited for): take up to a batch of pending leaves,
extend the tiles, compute the root, sign the checkpoint, store all of it, commit.
"""

import logging
import threading
from collections.abc import Callable

import attrs

from ecp_core.ports.system import Clock
from ecp_core.ports.transparency import TransparencyUnit
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.keys import LogKeys
from ecp_core.transparency.merkle import leaf_hash, tree_root
from ecp_core.transparency.model import LogHead
from ecp_core.transparency.tiles import TILE_HEIGHT, TILE_WIDTH, TiledHashes, TileKey, extend_tiles

logger = logging.getLogger("ecp.transparency")

BATCH = 10_000
"""Leaves appended per tenant per pass at most."""
TENANTS_PER_PASS = 100


def right_edge(size: int) -> list[TileKey]:
    """The tiles on the right edge of a tree of ``size`` leaves that are partial (not yet full)."""
    keys, level = [], 0
    while size >> (TILE_HEIGHT * level):
        hashes = size >> (TILE_HEIGHT * level)
        if hashes % TILE_WIDTH:
            keys.append((level, hashes // TILE_WIDTH))
        level += 1
    return keys


@attrs.frozen
class Integrated:
    """What one pass did for one tenant: leaves appended and the log's size after it.

    Nothing appended and size -1 when another process held the tenant's log.
    """

    tenant_id: str
    appended: int
    size: int


@attrs.frozen
class LogIntegrator:
    """Appends pending leaves to each tenant's log and signs its new checkpoint."""

    unit_of_work: Callable[[], TransparencyUnit]
    keys: LogKeys
    clock: Clock
    batch: int = BATCH
    _signed: set[str] = attrs.field(factory=set, init=False, repr=False)
    _guard: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False)

    def drain_signed(self) -> list[str]:
        """The tenants this process signed a new checkpoint for since the last call."""
        with self._guard:
            tenants = sorted(self._signed)
            self._signed.clear()
        return tenants

    def integrate(self) -> list[Integrated]:
        """One pass over the tenants with pending leaves."""
        with self.unit_of_work() as uow:
            tenants = uow.transparency.tenants_pending(TENANTS_PER_PASS)
        return [self.integrate_tenant(tenant) for tenant in tenants]

    def integrate_tenant(self, tenant_id: str, *, wait: bool = False) -> Integrated:
        """Append up to a batch of the tenant's pending leaves and sign the new checkpoint.

        Another process integrating the tenant is skipped, or with ``wait`` waited for (a
        reader that needs every committed record in the log: a bundle, an export).
        """
        with self.unit_of_work() as uow:
            log = uow.transparency
            if not log.lock(tenant_id, wait=wait):
                return Integrated(tenant_id, 0, -1)
            head = log.head(tenant_id)
            size = head.size if head else 0
            pending = log.pending(tenant_id, self.batch)
            if not pending:
                return Integrated(tenant_id, 0, size)
            stored = log.tiles(tenant_id, right_edge(size))
            leaves = [leaf_hash(leaf.entry) for leaf in pending]
            changed = extend_tiles(size, leaves, lambda lvl, i: stored.get((lvl, i), b""))
            tiles = {**stored, **changed}
            new_size = size + len(pending)
            root = tree_root(new_size, TiledHashes(lambda lvl, i: tiles.get((lvl, i), b"")))
            checkpoint = Checkpoint(self.keys.origin_of(tenant_id), new_size, root)
            text = checkpoint.text()
            note = text + "\n" + self.keys.signer(tenant_id).signature_line(text)
            signed = LogHead(tenant_id, new_size, root, note, self.clock.now())
            log.append(tenant_id, size, pending, changed, signed)
            uow.commit()
        with self._guard:
            self._signed.add(tenant_id)
        logger.info(
            "log checkpoint signed",
            extra={"tenant_id": tenant_id, "tree_size": new_size, "appended": len(pending)},
        )
        return Integrated(tenant_id, len(pending), new_size)


__all__ = ["BATCH", "Integrated", "LogIntegrator", "right_edge"]
