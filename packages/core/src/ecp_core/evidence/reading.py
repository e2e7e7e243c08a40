"""Execution batches read straight from their JSON text: checked and digested in one pass.

The generic path reads a body with :func:`~ecp_core.json_text.parse_json_text` (I-JSON rules in
decoder hooks), structures it with the cattrs converter (a hook call per field) and digests each
event from its unstructured form: several times what storing the event with COPY costs
(``bench/debugger.py``). The fast loop (:mod:`ecp_core.evidence.plain_rows`) does the same work
for an ``ExecutionBatch`` body in one loop over parsed JSON and answers exactly as the generic
path does: whenever a body is not plainly acceptable (any broken rule, any doubt), the generic
path reads it, and raises the usual errors naming every failing field. So the fast loop only
has to recognise good bodies, never to describe bad ones.

:class:`ExecutionBody` hands a body to a store either way it asks (ADR 0060): as checked rows,
streamed while later events are still being read (PostgreSQL COPYs them as they come), or as
event models (the memory store).
"""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from ecp_core.errors import EcpError
from ecp_core.evidence.model import CostRole, Digested, ExecutionBatch, ExecutionEvent
from ecp_core.evidence.plain_rows import Doubt, plain_rows
from ecp_core.evidence.rows import ExecutionRow, execution_row
from ecp_core.evidence.rules import checked, execution_problems
from ecp_core.json_text import parse_json_text
from ecp_core.types import CostMeasurement
from ecp_core.wire import parse_timestamp, structure


class ExecutionBody:
    """An ``ExecutionBatch`` JSON body, read as the store asks: as rows, or as events.

    Either read raises what the generic path raises for a bad body: MalformedRequest (not JSON),
    InvalidJsonValue (not I-JSON) or ValidationFailed (fields, then the evidence rules).
    """

    def __init__(self, raw: bytes) -> None:
        """Wrap the body's bytes; nothing is read yet."""
        self._raw = raw
        self.received: int | None = None
        """How many events the body holds, once it has been read whole and found good."""
        self._failed = False

    def rows(self) -> Iterator[ExecutionRow]:
        """The events as checked rows, in the body's order, each as soon as it is read.

        The body is known good only once the iterator is exhausted: until then a later event
        may still raise the body's error, and whatever the consumer did with earlier rows must
        be undone.
        """
        count = 0
        try:
            for row, _ in plain_rows(self._raw):
                yield row
                count += 1
        except Doubt:
            # Rows already given are the generic path's too (each event reads the same either
            # way): go on from there, or raise the body's errors.
            entries = self._generic()
            for entry in entries[count:]:
                yield execution_row(entry)
            count = len(entries)
        self.received = count

    def events(self) -> list[Digested[ExecutionEvent]]:
        """The events as digested models."""
        try:
            entries = [
                Digested(_event(row, item), row.digest) for row, item in plain_rows(self._raw)
            ]
        except Doubt:
            entries = self._generic()
        self.received = len(entries)
        return entries

    def check(self) -> None:
        """Raise the body's error, if it has one (unless a read has raised it already)."""
        if self.received is None and not self._failed:
            self.events()

    def _generic(self) -> list[Digested[ExecutionEvent]]:
        try:
            return _generic(self._raw)
        except EcpError:
            self._failed = True
            raise


def read_execution_batch(raw: bytes) -> list[Digested[ExecutionEvent]]:
    """The events of an ``ExecutionBatch`` body, checked against the evidence rules, digested.

    Raises what the generic path raises for a bad body (see :class:`ExecutionBody`).
    """
    return ExecutionBody(raw).events()


def _generic(raw: bytes) -> list[Digested[ExecutionEvent]]:
    batch = structure(parse_json_text(raw), ExecutionBatch, what="the body")
    return checked(batch.events, execution_problems)


def _event(row: ExecutionRow, item: dict[str, Any]) -> ExecutionEvent:
    """The model of a plain event from its row (checked texts) and its JSON object."""
    return ExecutionEvent(
        event_id=row.event_id,
        workflow_id=row.workflow_id,
        workflow_version=row.workflow_version,
        occurred_at=parse_timestamp(row.occurred_at),
        run_id=row.run_id,
        step_id=row.step_id,
        attempt=row.attempt,
        subject_id=row.subject_id,
        dimensions=item.get("dimensions", {}),
        cost_usd=None if row.cost_usd is None else Decimal(row.cost_usd),
        cost_measurement=CostMeasurement(row.cost_measurement),
        cost_role=CostRole(row.cost_role),
        charge_id=row.charge_id,
        source_window_id=row.source_window_id,
        join_key=row.join_key,
        metadata=item.get("metadata", {}),
    )
