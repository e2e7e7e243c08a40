"""Reading proofs from stored tiles in one statement.

A proof needs a handful of tiles. :func:`with_tiles` first computes the proof against stand-in
full tiles to learn which tiles it touches (the structure of a proof depends on the sizes only,
never on the hashes), reads those tiles at once, then computes the proof for real.
"""

from collections.abc import Callable, Iterable
from typing import TypeVar

from ecp_core.transparency.merkle import HASH_SIZE, PerfectHashes
from ecp_core.transparency.tiles import TILE_WIDTH, TiledHashes, TileKey

T = TypeVar("T")
_STAND_IN = bytes(HASH_SIZE * TILE_WIDTH)


def with_tiles(
    read: Callable[[Iterable[TileKey]], dict[TileKey, bytes]],
    compute: Callable[[PerfectHashes], T],
) -> T:
    """``compute`` over the tree's tiles, read through ``read`` in one call."""
    touched: set[TileKey] = set()

    def stand_in(level: int, index: int) -> bytes:
        touched.add((level, index))
        return _STAND_IN

    compute(TiledHashes(stand_in))
    tiles = read(touched)
    return compute(TiledHashes(lambda level, index: tiles.get((level, index), b"")))


__all__ = ["with_tiles"]
