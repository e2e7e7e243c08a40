"""Helpers shared by handlers: ``Prefer: wait``."""

import re
from collections.abc import Mapping

from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL, WAITING

_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*(\d+)(?:$|[,;\s])")


def preferred_wait(headers: Mapping[str, str], limit: float) -> float:
    """Seconds the client asked to wait with ``Prefer: wait=N`` (RFC 7240), capped at ``limit``."""
    match = _WAIT.search(headers.get("prefer", ""))
    return 0.0 if match is None else min(float(match.group(1)), limit)


def settled(run: Run) -> bool:
    """Whether ``run`` waits (for an approval, an interrupt, a task, or its unpausing) or ended."""
    return run.status in TERMINAL or run.status in WAITING or bool(run.paused_by)
