"""Dotted paths into the run state (``a.b.c``)."""

from typing import Any

_MISSING = object()


def get_path(state: Any, path: str, default: Any = None) -> Any:  # noqa: ANN401
    """Return the value at ``path`` in nested objects, or ``default`` when any step is absent."""
    current = state
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            return default
        current = current[part]
    return current


def has_path(state: Any, path: str) -> bool:  # noqa: ANN401
    """Say whether ``path`` names a value in ``state``."""
    return get_path(state, path, _MISSING) is not _MISSING


def set_path(state: dict[str, Any], path: str, value: Any) -> dict[str, Any]:  # noqa: ANN401
    """Return a copy of ``state`` with ``value`` written at ``path`` (making objects on the way).

    A step through a non-object value replaces it with an object.
    """
    head, _, rest = path.partition(".")
    result = dict(state)
    if not rest:
        result[head] = value
        return result
    child = result.get(head)
    result[head] = set_path(child if isinstance(child, dict) else {}, rest, value)
    return result
