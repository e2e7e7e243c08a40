"""Reference measures of JSON values for tests of the wire boundary."""

from typing import Any


def depth_of(value: Any) -> int:
    """Nesting depth of arrays and objects (a scalar is 0, ``[]`` is 1)."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0
