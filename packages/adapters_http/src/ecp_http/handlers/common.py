"""Helpers shared by handlers: ``Prefer: wait``."""

import re
import time
from collections.abc import Mapping

from ecp_core.runs.model import Run
from ecp_core.runs.service import RunService
from ecp_core.runs.state_machine import TERMINAL, WAITING

_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*(\d+)(?:$|[,;\s])")


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
