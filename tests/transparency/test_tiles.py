"""Tiles as C2SP tlog-tiles names and fills them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.transparency.merkle import leaf_hash
from ecp_core.transparency.tiles import (
    TILE_WIDTH,
    TileName,
    extend_tiles,
    parse_tile_path,
    tile_width,
    tiles_in_memory,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (TileName(0, 0), "tile/0/000"),
        (TileName(0, 1234067), "tile/0/x001/x234/067"),
        (TileName(1, 5, 17), "tile/1/005.p/17"),
        (TileName(2, 1000), "tile/2/x001/000"),
    ],
)
def test_tile_paths_as_the_format_writes_them(name, path):
    assert name.path() == path
    assert parse_tile_path(path.removeprefix("tile/")) == name


@pytest.mark.parametrize(
    "rest",
    [
        "01/000",
        "0/1",
        "0/0000",
        "0/x000/001",
        "64/000",
        "0/000.p/256",
        "0/000.p/0",
        "0/000.p/07",
        "0/001/002",
        "a/000",
        "",
    ],
)
def test_paths_that_name_no_tile_are_refused(rest):
    with pytest.raises(ValueError):
        parse_tile_path(rest)


@given(
    st.integers(min_value=0, max_value=10**15),
    st.integers(min_value=0, max_value=63),
    st.integers(min_value=1, max_value=256),
)
def test_a_tile_name_reads_back(index, level, width):
    name = TileName(level, index, width)
    assert parse_tile_path(name.path().removeprefix("tile/")) == name


def test_the_formats_example_of_70000_leaves():
    """273 full level-0 tiles and one of 112, a full level-1 tile and one of 17, a level-2 of 1."""
    size = 70_000
    assert [tile_width(size, 0, i) for i in (272, 273, 274)] == [TILE_WIDTH, 112, 0]
    assert [tile_width(size, 1, i) for i in (0, 1, 2)] == [TILE_WIDTH, 17, 0]
    assert [tile_width(size, 2, i) for i in (0, 1)] == [1, 0]


def test_appending_grows_partial_tiles_and_fills_the_level_above():
    leaves = [leaf_hash(str(i).encode()) for i in range(600)]
    tiles: dict[tuple[int, int], bytes] = {}
    size = 0
    for batch in (100, 200, 300):
        tiles.update(extend_tiles(size, leaves[size : size + batch], tiles_in_memory(tiles)))
        size += batch
    assert {key: len(tile) // 32 for key, tile in tiles.items()} == {
        (0, 0): 256,
        (0, 1): 256,
        (0, 2): 88,
        (1, 0): 2,
    }
    assert tiles[(0, 1)] == b"".join(leaves[256:512])
