"""Mapping operations applied to JSON objects: a mapping node's state, a child run's input."""

from collections.abc import Iterable, Mapping
from typing import Any

from ecp_core.canonical import thaw
from ecp_core.graphs.definition import MappingOperation
from ecp_core.graphs.paths import get_path, has_path, set_path


class MissingSource(Exception):
    """A copy operation found no value at its ``source_path``."""

    def __init__(self, path: str) -> None:
        """Name the path that held no value."""
        super().__init__(f"no value at {path!r}")
        self.path = path


def apply_operations(
    operations: Iterable[MappingOperation],
    target: Mapping[str, Any],
    source: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write each operation's value into ``target``, in order: ``(target after, written)``.

    A constant writes its value; a copy reads ``source`` (None: ``target`` as written so far).
    ``written`` maps each target path to the value written there. Raises MissingSource.
    """
    result = dict(target)
    written: dict[str, Any] = {}
    for operation in operations:
        if operation.operation == "constant":
            value = thaw(operation.value)
        else:
            read = result if source is None else source
            if not has_path(read, operation.source_path):
                raise MissingSource(operation.source_path)
            value = get_path(read, operation.source_path)
        result = set_path(result, operation.target_path, value)
        written[operation.target_path] = value
    return result, written


__all__ = ["MissingSource", "apply_operations"]
