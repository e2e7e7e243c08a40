"""Helpers the benchmarks on evidence share: the load note, millisecond figures and the data set's
container. Imported by the bench scripts; not run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.evidence.model import ChargeRevision, ExecutionEvent, OutcomeEvent


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms"


@dataclass
class Evidence:
    """The bench's evidence, as models, with the window that holds every execution event."""

    start: datetime
    end: datetime
    executions: list[ExecutionEvent] = field(default_factory=list)
    outcomes: list[OutcomeEvent] = field(default_factory=list)
    revisions: list[ChargeRevision] = field(default_factory=list)
