"""What a move of a run asks of the task queue: offer a task node's work."""

import attrs

from ecp_core.runs.run.effects import Effect
from ecp_core.runs.tasks.model import Task


@attrs.frozen
class OfferTask(Effect):
    """Offer a task node's work to the workers of its topic."""

    task: Task


__all__ = ["OfferTask"]
