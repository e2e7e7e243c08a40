"""Helpers shared by handlers: query parameters and ``Prefer: wait``."""

import re
import time
from collections.abc import Mapping

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.runs.model import Run
from ecp_core.runs.service import RunService
from ecp_core.runs.state_machine import TERMINAL, WAITING

_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*(\d+)(?:$|[,;\s])")


def int_query(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within ``low``..``high``; 422 otherwise."""
    raw = query.get(name)
    if raw is None:
        return default
    # ASCII digits only: str.isdigit also takes superscripts, circled and fullwidth digits.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= len(str(high))) or not (
        low <= int(raw) <= high
    ):
        raise ValidationFailed(
            f"invalid {name}",
            errors=[
                FieldError(loc=("query", name), msg=f"must be a whole number from {low} to {high}")
            ],
        )
    return int(raw)


def preferred_wait(headers: Mapping[str, str], limit: float) -> float:
    """Seconds the client asked to wait with ``Prefer: wait=N`` (RFC 7240), capped at ``limit``."""
    match = _WAIT.search(headers.get("prefer", ""))
    return 0.0 if match is None else min(float(match.group(1)), limit)


def wait_until_settled(runs: RunService, run: Run, seconds: float, poll: float = 0.02) -> Run:
    """Re-read ``run`` until it waits or ends, or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while run.status not in TERMINAL and run.status not in WAITING and time.monotonic() < deadline:
        time.sleep(poll)
        run = runs.get(run.tenant_id, run.run_id)
    return run
