"""Execution events as checked rows: the texts a store writes, one tuple per event (ADR 0060).

A row is an event that has passed every check, with its digest, spelt as a store keeps it:
the timestamp as RFC 3339 UTC text, the amount as the decimal's text, the enums as their values,
``dimensions`` and ``metadata`` as canonical JSON. The one-pass reader
(:mod:`ecp_core.evidence.reading`) makes rows straight from a body's JSON; :func:`execution_row`
makes the same row from an event model (the generic path, and stores given models).
"""

from typing import NamedTuple

from ecp_core.canonical import canonical_json
from ecp_core.evidence.model import Digested, ExecutionEvent
from ecp_core.wire import format_timestamp


class ExecutionRow(NamedTuple):
    """A checked execution event with its digest, field by field as text (or int, or None)."""

    event_id: str
    digest: str
    workflow_id: str
    workflow_version: str
    occurred_at: str
    """RFC 3339 UTC with microseconds and ``Z`` (:func:`~ecp_core.wire.format_timestamp`)."""
    run_id: str | None
    step_id: str | None
    attempt: int
    subject_id: str | None
    dimensions: str
    """Canonical JSON (RFC 8785) of the object."""
    cost_usd: str | None
    """``str`` of the amount's Decimal, exponent kept (``0.10`` stays ``0.10``)."""
    cost_measurement: str
    cost_role: str
    charge_id: str | None
    source_window_id: str | None
    join_key: str | None
    metadata: str
    """Canonical JSON (RFC 8785) of the object."""


def execution_row(entry: Digested[ExecutionEvent]) -> ExecutionRow:
    """The row of a digested execution event model."""
    event = entry.item
    return ExecutionRow(
        event.event_id,
        entry.digest,
        event.workflow_id,
        event.workflow_version,
        format_timestamp(event.occurred_at),
        event.run_id,
        event.step_id,
        event.attempt,
        event.subject_id,
        canonical_json(event.dimensions).decode("utf-8"),
        None if event.cost_usd is None else str(event.cost_usd),
        event.cost_measurement.value,
        event.cost_role.value,
        event.charge_id,
        event.source_window_id,
        event.join_key,
        canonical_json(event.metadata).decode("utf-8"),
    )
