"""Run-lifecycle events: which webhook events a move of a run emits, and what they tell.

The events are effects of a :class:`~ecp_core.runs.run.effects.Step`; the lifecycle queues them in the
same transaction as the state change that causes them.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from ecp_core.runs.run.effects import Effect
from ecp_core.runs.run.model import Run
from ecp_core.types import RunPublicStatus
from ecp_core.webhooks.model import WebhookEventType as E
from ecp_core.wire import unstructure

_ENDINGS = {
    RunPublicStatus.COMPLETED: E.RUN_COMPLETED,
    RunPublicStatus.FAILED: E.RUN_FAILED,
    RunPublicStatus.TERMINATED_BY_POLICY: E.RUN_TERMINATED_BY_POLICY,
    RunPublicStatus.CANCELED: E.RUN_CANCELED,
}


def run_data(run: Run) -> dict[str, Any]:
    """What every run event tells about the run."""
    return {
        "run_id": run.run_id,
        "status": run.public_status.value,
        "graph_version_ref": run.graph_version_ref,
        "thread_id": run.thread_id,
        "failure_state": unstructure(run.failure_state),
    }


@attrs.frozen
class EmitEvent(Effect):
    """Queue a run-lifecycle webhook event about ``run`` as it was at that point."""

    event: E
    run: Run
    data: Mapping[str, Any] = attrs.field(factory=dict)

    def payload_data(self) -> dict[str, Any]:
        """The event's ``data``: the run's facts and the event's own."""
        return {**run_data(self.run), **self.data}


def event_of(event: E, run: Run, **data: Any) -> EmitEvent:  # noqa: ANN401
    """The ``event`` about ``run`` with ``data`` of its own."""
    return EmitEvent(event, run, data)


def started(run: Run) -> EmitEvent:
    """A run left PENDING."""
    return event_of(E.RUN_STARTED, run)


@attrs.frozen
class ChildEnded(Effect):
    """A child run ended: its parent's subgraph node records it and moves on (ADR 0046).

    Not a webhook event; the lifecycle hands it to the parent in the same transaction.
    """

    child: Run


def ended(run: Run) -> tuple[EmitEvent | ChildEnded, ...]:
    """A run completed, failed or was terminated by policy (nothing for any other status).

    A child run's ending also tells its parent.
    """
    event = _ENDINGS.get(run.public_status)
    if event is None:
        return ()
    parent = () if run.parent_run_id is None else (ChildEnded(run),)
    return (event_of(event, run), *parent)
