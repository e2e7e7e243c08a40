"""Merkle tree hashing and proofs as RFC 9162 (section 2.1) defines them, over SHA-256.

A tree's nodes are read through :data:`PerfectHashes`: the hash of a *perfect* subtree, the
``2**level`` leaves from ``index * 2**level`` on. Every hash a proof needs is such a subtree or,
on the tree's right edge, a fold of a few of them, so a store that keeps perfect subtrees (the
tiles of :mod:`ecp_core.transparency.tiles`) answers any proof without holding the whole tree.
"""

import hashlib
from collections.abc import Callable, Sequence

HASH_SIZE = 32
"""Bytes in a SHA-256 hash."""
EMPTY_ROOT = hashlib.sha256(b"").digest()
"""The root of the tree with no leaves."""

PerfectHashes = Callable[[int, int], bytes]
"""``(level, index)`` → the hash of leaves ``[index * 2**level, (index + 1) * 2**level)``."""


def leaf_hash(entry: bytes) -> bytes:
    """The hash of a leaf: ``SHA-256(0x00 || entry)``."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an inner node: ``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def perfect_root(hashes: Sequence[bytes]) -> bytes:
    """The root over ``hashes``, whose number is a power of two (pairs, then pairs of pairs)."""
    level = list(hashes)
    while len(level) > 1:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def split_point(size: int) -> int:
    """The largest power of two below ``size`` (which is at least 2): where RFC 9162 splits."""
    return 1 << ((size - 1).bit_length() - 1)


def subtree_hash(start: int, end: int, perfect: PerfectHashes) -> bytes:
    """The hash of leaves ``[start, end)``, a subtree of the tree (a node of RFC 9162's tree).

    The range is cut into perfect subtrees of falling size, folded from the right.
    """
    if end <= start:
        raise ValueError("a subtree has at least one leaf")
    pieces: list[bytes] = []
    at = start
    while at < end:
        level = (end - at).bit_length() - 1  # the largest power of two that fits
        while at % (1 << level):  # and that starts here
            level -= 1
        pieces.append(perfect(level, at >> level))
        at += 1 << level
    root = pieces[-1]
    for piece in reversed(pieces[:-1]):
        root = node_hash(piece, root)
    return root


def tree_root(size: int, perfect: PerfectHashes) -> bytes:
    """The root of the tree of ``size`` leaves (:data:`EMPTY_ROOT` when there are none)."""
    return EMPTY_ROOT if size == 0 else subtree_hash(0, size, perfect)


def inclusion_proof(index: int, size: int, perfect: PerfectHashes) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size`` leaves, leaf end first."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = split_point(end - start)
        if index < start + k:
            path.append(subtree_hash(start + k, end, perfect))
            end = start + k
        else:
            path.append(subtree_hash(start, start + k, perfect))
            start += k
    path.reverse()
    return path


def consistency_proof(first: int, second: int, perfect: PerfectHashes) -> list[bytes]:
    """The proof that the tree of ``first`` leaves is a prefix of the tree of ``second``."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    if first in (0, second):
        return []
    path: list[bytes] = []
    start, end, whole = 0, second, True
    m = first
    while m != end - start:
        k = split_point(end - start)
        if m <= k:
            path.append(subtree_hash(start + k, end, perfect))
            end = start + k
        else:
            path.append(subtree_hash(start, start + k, perfect))
            start += k
            m -= k
            whole = False
    if not whole:
        path.append(subtree_hash(start, end, perfect))
    path.reverse()
    return path


def _shift_while_even(fn: int, sn: int) -> tuple[int, int]:
    """Right-shift both until ``fn`` is odd or zero (RFC 9162's "until LSB(fn) is set")."""
    while fn and not fn & 1:
        fn, sn = fn >> 1, sn >> 1
    return fn, sn


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> bool:
    """Whether ``path`` proves the leaf hash ``leaf`` at ``index`` in the tree ``root`` of ``size``."""
    if not 0 <= index < size or any(len(p) != HASH_SIZE for p in path):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                fn, sn = _shift_while_even(fn, sn)
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def _trivially_consistent(
    first: int, second: int, path: Sequence[bytes], first_root: bytes, second_root: bytes
) -> bool | None:
    """The answer for malformed proofs, equal sizes and an empty old tree; None otherwise."""
    if not 0 <= first <= second or any(len(p) != HASH_SIZE for p in path):
        return False
    if first == second:
        return not path and first_root == second_root
    if first == 0:
        return not path and first_root == EMPTY_ROOT
    return None if path else False


def verify_consistency(
    first: int, second: int, path: Sequence[bytes], first_root: bytes, second_root: bytes
) -> bool:
    """Whether ``path`` proves the tree ``first_root`` of ``first`` leaves a prefix of ``second``'s."""
    trivial = _trivially_consistent(first, second, path, first_root, second_root)
    if trivial is not None:
        return trivial
    hashes = list(path)
    if first & (first - 1) == 0:  # a power of two: the old root is a node of the new tree
        hashes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                fn, sn = _shift_while_even(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


def range_proof(start: int, end: int, size: int, perfect: PerfectHashes) -> list[bytes]:
    """The hashes that, with leaves ``[start, end)``, give the root of the tree of ``size``.

    The tree is walked as RFC 9162 splits it; each subtree wholly outside the range is one
    hash, left to right. Together with the range's leaves they recompute the root
    (:func:`root_from_range`), which proves those leaves, and no others, sit at those indices.
    """
    if not 0 <= start < end <= size:
        raise ValueError(f"no range [{start}, {end}) in a tree of {size}")
    proof: list[bytes] = []

    def walk(low: int, high: int) -> None:
        if high <= start or end <= low:
            proof.append(subtree_hash(low, high, perfect))
        elif not (start <= low and high <= end):
            k = split_point(high - low)
            walk(low, low + k)
            walk(low + k, high)

    walk(0, size)
    return proof


def root_from_range(
    start: int, size: int, leaves: Sequence[bytes], proof: Sequence[bytes]
) -> bytes | None:
    """The root that leaf hashes ``leaves`` from ``start`` and ``proof`` give, or None.

    None when the proof has too few or too many hashes, or a hash of the wrong length.
    """
    end = start + len(leaves)
    if not leaves or not 0 <= start < end <= size or any(len(h) != HASH_SIZE for h in proof):
        return None
    hashes = iter(proof)

    def root(low: int, high: int) -> bytes | None:
        if high <= start or end <= low:
            return next(hashes, None)
        if high - low == 1:
            return leaves[low - start]
        k = split_point(high - low)
        left, right = root(low, low + k), root(low + k, high)
        return None if left is None or right is None else node_hash(left, right)

    found = root(0, size)
    return None if found is None or next(hashes, None) is not None else found


__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "PerfectHashes",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "perfect_root",
    "range_proof",
    "root_from_range",
    "split_point",
    "subtree_hash",
    "tree_root",
    "verify_consistency",
    "verify_inclusion",
]
