"""Finding runs: the filters of the console's run list, and what each one admits.

A :class:`RunFilter` is read by every store the same way (``RunRepository.search``); the
conformance suite holds them equal. The status filter speaks the public statuses, as clients
see them (:func:`ecp_core.runs.run.model.public_status`), so ``paused`` and
``terminated_by_policy`` are found as the list shows them.
"""

from datetime import datetime

import attrs

from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import WAITING
from ecp_core.types import RunPublicStatus

SEARCH_CURSOR = "run-search"
"""The kind of a run list's cursor (the run id of the page's last run)."""


@attrs.frozen(kw_only=True)
class RunFilter:
    """What a run must match to be listed; None (or empty) matches every run."""

    deployment_ref: str | None = None
    status: RunPublicStatus | None = None
    """The run's public status."""
    created_from: datetime | None = None
    """Started at or after this instant."""
    created_to: datetime | None = None
    """Started before this instant."""
    run_or_key: str | None = None
    """A run id, or the idempotency key a run was started with."""
    graph_version_ref: str | None = None
    """The graph version the run is on."""
    waiting: bool = False
    """Only runs that wait (for an approval, an interrupt, a task, a child run or a timer)."""

    def admits(self, run: Run) -> bool:
        """Whether ``run`` matches every filter given."""
        return (
            self.deployment_ref in (None, run.deployment_ref)
            and self.status in (None, run.public_status)
            and (self.created_from is None or run.created_at >= self.created_from)
            and (self.created_to is None or run.created_at < self.created_to)
            and self.run_or_key in (None, run.run_id, run.idempotency_key)
            and self.graph_version_ref in (None, run.graph_version_ref)
            and (not self.waiting or run.status in WAITING)
        )


__all__ = ["SEARCH_CURSOR", "RunFilter"]
