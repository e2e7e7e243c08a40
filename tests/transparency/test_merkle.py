"""RFC 9162 hashing and proofs, read through tiles, against the definition itself.

The reference here is the RFC's recursive definition of the Merkle Tree Hash over a list of
leaves; the code under test reads only perfect-subtree hashes from tiles grown in batches.
"""

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.transparency.merkle import (
    EMPTY_ROOT,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    range_proof,
    root_from_range,
    split_point,
    tree_root,
    verify_consistency,
    verify_inclusion,
)
from ecp_core.transparency.tiles import TiledHashes, extend_tiles, tiles_in_memory

pytestmark = pytest.mark.unit


def reference_root(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) exactly as RFC 9162 section 2.1.1 defines it."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaf_hash(leaves[0])
    k = split_point(len(leaves))
    return node_hash(reference_root(leaves[:k]), reference_root(leaves[k:]))


def entries(count: int, salt: int = 0) -> list[bytes]:
    return [hashlib.sha256(f"{salt}:{i}".encode()).digest() for i in range(count)]


def grown(
    leaves: list[bytes], batches: list[int]
) -> tuple[dict[tuple[int, int], bytes], list[int]]:
    """Tiles for ``leaves`` appended in batches of the given sizes; the sizes after each batch."""
    tiles: dict[tuple[int, int], bytes] = {}
    size, sizes = 0, []
    for batch in [*batches, len(leaves)]:
        added = leaves[size : size + batch]
        tiles.update(extend_tiles(size, [leaf_hash(e) for e in added], tiles_in_memory(tiles)))
        size += len(added)
        sizes.append(size)
        if size == len(leaves):
            break
    return tiles, sizes


sizes = st.integers(min_value=0, max_value=1100)
batches = st.lists(st.integers(min_value=1, max_value=600), max_size=6)


@settings(max_examples=60, deadline=None)
@given(count=sizes, batches=batches)
def test_the_root_read_from_tiles_is_the_definition_s_at_every_size(count, batches):
    leaves = entries(count)
    tiles, grown_sizes = grown(leaves, batches)
    perfect = TiledHashes(tiles_in_memory(tiles))
    for size in {0, *grown_sizes}:
        assert tree_root(size, perfect) == reference_root(leaves[:size])


@settings(max_examples=60, deadline=None)
@given(count=st.integers(min_value=1, max_value=1100), data=st.data())
def test_every_inclusion_proof_verifies_and_any_flipped_bit_fails(count, data):
    leaves = entries(count)
    tiles, _ = grown(leaves, [])
    perfect = TiledHashes(tiles_in_memory(tiles))
    size = data.draw(st.integers(min_value=1, max_value=count), label="size")
    index = data.draw(st.integers(min_value=0, max_value=size - 1), label="index")
    root = reference_root(leaves[:size])
    path = inclusion_proof(index, size, perfect)
    leaf = leaf_hash(leaves[index])
    assert verify_inclusion(leaf, index, size, path, root)
    assert len(path) <= (size - 1).bit_length()
    # One flipped bit anywhere (the leaf, a path hash, the root) fails; so does another index.
    bit = data.draw(st.integers(min_value=0, max_value=255), label="bit")

    def flip(h: bytes) -> bytes:
        return bytes([h[0] ^ (1 << (bit % 8))]) + h[1:] if bit < 8 else h[:-1] + bytes([h[-1] ^ 1])

    assert not verify_inclusion(flip(leaf), index, size, path, root)
    assert not verify_inclusion(leaf, index, size, path, flip(root))
    for at in range(len(path)):
        tampered = [*path[:at], flip(path[at]), *path[at + 1 :]]
        assert not verify_inclusion(leaf, index, size, tampered, root)
    if size > 1:
        other = (index + 1) % size
        assert not verify_inclusion(leaf, other, size, path, root)


@settings(max_examples=80, deadline=None)
@given(count=st.integers(min_value=1, max_value=1100), data=st.data())
@pytest.mark.spec("C16 log-export")
def test_a_range_proof_gives_the_root_only_with_exactly_those_leaves(count, data):
    leaves = entries(count)
    tiles, _ = grown(leaves, [])
    perfect = TiledHashes(tiles_in_memory(tiles))
    size = data.draw(st.integers(min_value=1, max_value=count), label="size")
    start = data.draw(st.integers(min_value=0, max_value=size - 1), label="start")
    end = data.draw(st.integers(min_value=start + 1, max_value=size), label="end")
    hashes = [leaf_hash(e) for e in leaves[start:end]]
    proof = range_proof(start, end, size, perfect)
    assert root_from_range(start, size, hashes, proof) == reference_root(leaves[:size])
    assert len(proof) <= 2 * size.bit_length()
    # A leaf flipped, dropped, added or moved, or a proof hash flipped, gives another root.
    at = data.draw(st.integers(min_value=0, max_value=len(hashes) - 1), label="at")
    flipped = [*hashes[:at], bytes([hashes[at][0] ^ 1]) + hashes[at][1:], *hashes[at + 1 :]]
    root = reference_root(leaves[:size])
    assert root_from_range(start, size, flipped, proof) != root
    assert root_from_range(start, size, hashes[:-1], proof) != root
    assert root_from_range(start, size, [*hashes, hashes[0]], proof) != root
    if start > 0:
        assert root_from_range(start - 1, size, hashes, proof) != root
    for i in range(len(proof)):
        tampered = [*proof[:i], bytes([proof[i][0] ^ 1]) + proof[i][1:], *proof[i + 1 :]]
        assert root_from_range(start, size, hashes, tampered) != root
    assert root_from_range(start, size, hashes, [*proof, root]) is None


@settings(max_examples=60, deadline=None)
@given(count=st.integers(min_value=1, max_value=1100), batches=batches, data=st.data())
def test_every_consistency_proof_between_checkpoints_verifies_and_a_flipped_bit_fails(
    count, batches, data
):
    leaves = entries(count)
    tiles, checkpoints = grown(leaves, batches)
    perfect = TiledHashes(tiles_in_memory(tiles))
    first = data.draw(st.sampled_from([0, *checkpoints]), label="first")
    second = data.draw(
        st.sampled_from([s for s in [0, *checkpoints] if s >= first]), label="second"
    )
    old, new = reference_root(leaves[:first]), reference_root(leaves[:second])
    path = consistency_proof(first, second, perfect)
    assert verify_consistency(first, second, path, old, new)
    for at in range(len(path)):
        tampered = [*path[:at], bytes([path[at][0] ^ 1]) + path[at][1:], *path[at + 1 :]]
        assert not verify_consistency(first, second, tampered, old, new)
    if 0 < first < second:
        assert not verify_consistency(first, second, path, bytes([old[0] ^ 1]) + old[1:], new)
        assert not verify_consistency(first, second, path, old, bytes([new[0] ^ 1]) + new[1:])
        forked = reference_root([*leaves[: first - 1], b"other", *leaves[first:second]])
        assert not verify_consistency(first, second, path, old, forked)


def test_small_trees_by_hand():
    a, b, c = (leaf_hash(x) for x in (b"a", b"b", b"c"))
    tiles = extend_tiles(0, [a, b, c], tiles_in_memory({}))
    perfect = TiledHashes(tiles_in_memory(tiles))
    assert tree_root(0, perfect) == EMPTY_ROOT
    assert tree_root(3, perfect) == node_hash(node_hash(a, b), c)
    assert inclusion_proof(2, 3, perfect) == [node_hash(a, b)]
    assert inclusion_proof(0, 3, perfect) == [b, c]
    assert consistency_proof(2, 3, perfect) == [c]
    assert consistency_proof(1, 3, perfect) == [b, c]


@pytest.mark.parametrize(("first", "second"), [(3, 2), (-1, 2)])
def test_no_proof_runs_backwards(first, second):
    with pytest.raises(ValueError):
        consistency_proof(first, second, TiledHashes(tiles_in_memory({})))
    assert not verify_consistency(first, second, [], EMPTY_ROOT, EMPTY_ROOT)
