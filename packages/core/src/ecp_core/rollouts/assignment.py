"""Deterministic, consistent assignment of units to arms (ADR 0089).

A unit's bucket is ``HMAC-SHA256(key, unit_id)`` read as a 64-bit integer, modulo 100: fixed for
the rollout's life and unpredictable without the key. Each arm owns as many of the 100 buckets
as its weight. A weight change takes buckets only from arms whose weight falls (their highest
ones) and gives them only to arms whose weight rises (the lowest free ones first), so a unit
moves only out of a shrinking arm into a growing one, and no more units move than must.
"""

import hashlib
import hmac
from collections.abc import Sequence

from ecp_core.rollouts.model import Arm

BUCKETS = 100
"""The buckets units fall into; one per percent of weight."""


def bucket(key: str, unit_id: str) -> int:
    """The unit's bucket (0 to 99) under the rollout's hex ``key``."""
    digest = hmac.new(bytes.fromhex(key), unit_id.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def first_buckets(weights: Sequence[int]) -> list[tuple[int, ...]]:
    """The buckets of each arm at creation: consecutive ranges in arm order."""
    owned, start = [], 0
    for weight in weights:
        owned.append(tuple(range(start, start + weight)))
        start += weight
    return owned


def rebalanced(arms: Sequence[Arm], weights: Sequence[int]) -> list[tuple[int, ...]]:
    """The buckets of each arm under new ``weights``, moving only what must move."""
    kept: list[list[int]] = []
    freed: list[int] = []
    for arm, weight in zip(arms, weights, strict=True):
        own = sorted(arm.buckets)
        kept.append(own[:weight])
        freed.extend(own[weight:])
    freed.sort()
    for owned, weight in zip(kept, weights, strict=True):
        take = weight - len(owned)
        owned.extend(freed[:take])
        del freed[:take]
    return [tuple(sorted(owned)) for owned in kept]


def arm_of(arms: Sequence[Arm], key: str, unit_id: str) -> Arm:
    """The arm whose buckets hold the unit's bucket."""
    point = bucket(key, unit_id)
    return next(arm for arm in arms if point in arm.buckets)


__all__ = ["BUCKETS", "arm_of", "bucket", "first_buckets", "rebalanced"]
