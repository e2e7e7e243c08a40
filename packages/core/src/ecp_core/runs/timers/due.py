"""When a wait node's run wakes: ``seconds`` after it is reached, or the time its state names."""

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ecp_core.graphs.definition import MAX_WAIT_SECONDS, NodeDefinition
from ecp_core.graphs.paths import get_path, has_path
from ecp_core.wire import parse_timestamp

RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")
"""An RFC 3339 date-time with an offset; Python's ISO reader alone would take other forms."""


class WaitTimeInvalid(ValueError):
    """A wait node's ``until_path`` holds no RFC 3339 time, or one more than a year ahead."""


def due_time(node: NodeDefinition, state: Mapping[str, Any], now: datetime) -> datetime:
    """When a run reaching ``node`` at ``now`` with ``state`` wakes (UTC).

    A time from the state may lie in the past (the run then goes on at once) but not more than
    :data:`~ecp_core.graphs.definition.MAX_WAIT_SECONDS` ahead, the bound ``seconds`` has too.
    """
    if node.seconds is not None:
        return now + timedelta(seconds=node.seconds)
    path = node.until_path
    assert path is not None  # noqa: S101 - graph validation guarantees one of the two
    if not has_path(state, path):
        raise WaitTimeInvalid(f"no value at until_path {path!r}")
    due = _timestamp(path, get_path(state, path))
    if due - now > timedelta(seconds=MAX_WAIT_SECONDS):
        raise WaitTimeInvalid(f"the time at {path!r} is more than a year ahead")
    return due


def _timestamp(path: str, value: object) -> datetime:
    """``value`` read as an RFC 3339 time with an offset, in UTC."""
    if not isinstance(value, str) or RFC3339.fullmatch(value) is None:
        raise WaitTimeInvalid(f"the value at {path!r} is not an RFC 3339 time with an offset")
    try:
        return parse_timestamp(value.upper())
    except ValueError as exc:  # shaped like one, but no such day or hour
        raise WaitTimeInvalid(f"the value at {path!r} is not a valid time: {exc}") from exc


__all__ = ["RFC3339", "WaitTimeInvalid", "due_time"]
