"""The tree stored as tiles, as C2SP ``tlog-tiles`` lays them out.

A tile at level ``L`` holds up to 256 consecutive hashes of the tree's level ``8 * L``: at level
0 the leaf hashes, above that the roots of the full tiles one level down. The rightmost tile of a
level is partial (fewer than 256 hashes) until it fills; a partial tile of width ``W`` is the
first ``W`` hashes of every later version of that tile, so a log keeps only the newest version.
"""

import re
from collections.abc import Callable, Mapping, Sequence

import attrs

from ecp_core.transparency.merkle import HASH_SIZE, perfect_root

TILE_HEIGHT = 8
"""Tree levels one tile spans."""
TILE_WIDTH = 1 << TILE_HEIGHT
"""Hashes in a full tile (256)."""
MAX_TILE_LEVEL = 63

TileKey = tuple[int, int]
"""``(level, index)`` of a tile."""
TileReader = Callable[[int, int], bytes]
"""``(level, index)`` → the stored hashes of that tile (empty when it has none yet)."""


@attrs.frozen
class TileName:
    """A tile's coordinates as its path names them: level, index and, when partial, width."""

    level: int
    index: int
    width: int = TILE_WIDTH

    @property
    def partial(self) -> bool:
        """Whether the tile holds fewer than 256 hashes."""
        return self.width < TILE_WIDTH

    def path(self) -> str:
        """``tile/<L>/<N>[.p/<W>]``, the index in three-digit elements (``x001/x234/067``)."""
        digits = f"{self.index:03d}"
        digits = "0" * (-len(digits) % 3) + digits
        groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
        index = "/".join([*("x" + g for g in groups[:-1]), groups[-1]])
        suffix = f".p/{self.width}" if self.partial else ""
        return f"tile/{self.level}/{index}{suffix}"


_ELEMENT = 3  # digits per path element of an index
_NUMBER = r"(0|[1-9][0-9]*)"
_TILE = re.compile(
    rf"^(?P<level>{_NUMBER})/(?P<index>(x[0-9]{{3}}/)*[0-9]{{3}})(\.p/(?P<width>[1-9][0-9]*))?$"
)


def parse_tile_path(rest: str) -> TileName:
    """The tile named by ``rest`` (what follows ``tile/``); ValueError when it is not a name."""
    found = _TILE.match(rest)
    if found is None:
        raise ValueError("a tile is <level>/<index in x001/x234/067 form>[.p/<width>]")
    level = int(found["level"])
    digits = found["index"].replace("x", "").replace("/", "")
    width = int(found["width"]) if found["width"] else TILE_WIDTH
    if level > MAX_TILE_LEVEL or (width >= TILE_WIDTH and found["width"]):
        raise ValueError("a tile's level is 0 to 63 and a partial tile's width 1 to 255")
    if len(digits) > _ELEMENT and digits.startswith("000"):
        raise ValueError("a tile's index has no leading zero elements")
    return TileName(level=level, index=int(digits), width=width)


def hashes_of(tile: bytes) -> list[bytes]:
    """A tile's bytes as its hashes."""
    return [tile[i : i + HASH_SIZE] for i in range(0, len(tile), HASH_SIZE)]


def tile_width(size: int, level: int, index: int) -> int:
    """How many hashes tile ``(level, index)`` holds in the tree of ``size`` leaves (0 to 256)."""
    hashes_at_level = size >> (TILE_HEIGHT * level)
    return max(0, min(TILE_WIDTH, hashes_at_level - index * TILE_WIDTH))


def extend_tiles(size: int, leaves: Sequence[bytes], rightmost: TileReader) -> dict[TileKey, bytes]:
    """The tiles to store when leaf hashes ``leaves`` are appended to a tree of ``size`` leaves.

    ``rightmost`` reads the tree's current tiles (only the partial ones on its right edge are
    asked for). Each changed tile is given whole; full tiles never change again.
    """
    changed: dict[TileKey, bytes] = {}
    level, start, added = 0, size, list(leaves)
    while added:
        filled: list[bytes] = []
        index = start // TILE_WIDTH
        offset = start % TILE_WIDTH
        tile = rightmost(level, index)[: offset * HASH_SIZE] if offset else b""
        if len(tile) != offset * HASH_SIZE:
            raise ValueError(f"tile {level}/{index} holds fewer hashes than the tree has")
        for hash_ in added:
            tile += hash_
            if len(tile) == TILE_WIDTH * HASH_SIZE:
                changed[(level, index)] = tile
                filled.append(perfect_root(hashes_of(tile)))
                index, tile = index + 1, b""
        if tile:
            changed[(level, index)] = tile
        level, added = level + 1, filled
        start = size >> (TILE_HEIGHT * level)  # hashes the level above holds so far
    return changed


class TiledHashes:
    """Perfect-subtree hashes (:data:`~ecp_core.transparency.merkle.PerfectHashes`) from tiles.

    A hash at tree level ``8 * L + r`` is the root of ``2**r`` consecutive hashes of one tile at
    level ``L``. Tiles are read once each through ``read`` and kept for this object's life (one
    proof, one checkpoint).
    """

    def __init__(self, read: TileReader) -> None:
        """Read tiles through ``read``."""
        self._read = read
        self._tiles: dict[TileKey, list[bytes]] = {}

    def tile(self, level: int, index: int) -> list[bytes]:
        """The hashes of tile ``(level, index)``."""
        key = (level, index)
        if key not in self._tiles:
            self._tiles[key] = hashes_of(self._read(level, index))
        return self._tiles[key]

    def __call__(self, level: int, index: int) -> bytes:
        """The hash of the perfect subtree ``index`` at tree level ``level``."""
        tile_level, rest = divmod(level, TILE_HEIGHT)
        first = index << rest  # the first hash of this subtree at the tile's level
        hashes = self.tile(tile_level, first // TILE_WIDTH)
        at = first % TILE_WIDTH
        wanted = hashes[at : at + (1 << rest)]
        if len(wanted) != 1 << rest:
            raise LookupError(f"the tiles do not hold the subtree {level}/{index}")
        return perfect_root(wanted)


def tiles_in_memory(tiles: Mapping[TileKey, bytes]) -> TileReader:
    """A :data:`TileReader` over ``tiles`` (a missing tile reads as empty)."""
    return lambda level, index: tiles.get((level, index), b"")


__all__ = [
    "MAX_TILE_LEVEL",
    "TILE_HEIGHT",
    "TILE_WIDTH",
    "TileKey",
    "TileName",
    "TileReader",
    "TiledHashes",
    "extend_tiles",
    "hashes_of",
    "parse_tile_path",
    "tile_width",
    "tiles_in_memory",
]
