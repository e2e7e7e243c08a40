"""The rules of economic evidence across fields, checked before a batch is stored."""

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    Digested,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    PredicateKind,
    SourceInventory,
    digest_of,
)
from ecp_core.types import CostMeasurement

T = TypeVar("T")
Problems = Iterable[tuple[str, str]]


def _cost_problems(cost: object, measurement: CostMeasurement) -> Problems:
    if cost is None and measurement is not CostMeasurement.UNMEASURED:
        yield (
            "cost_usd",
            f"is null (unknown), so cost_measurement must be unmeasured, not {measurement}",
        )
    if cost is not None and measurement is CostMeasurement.UNMEASURED:
        yield "cost_measurement", "is unmeasured, so cost_usd must be null"


def execution_problems(event: ExecutionEvent) -> Problems:
    """Rules across fields of an execution event."""
    if event.cost_role is CostRole.SUMMARY:
        if event.cost_usd is not None:
            yield "cost_usd", "must be null: a summary event carries no money"
        if event.charge_id is not None:
            yield "charge_id", "must be null: a summary event carries no money"
        return
    if event.charge_id is None:
        yield "charge_id", "is required for a charge"
    yield from _cost_problems(event.cost_usd, event.cost_measurement)


def revision_problems(revision: ChargeRevision) -> Problems:
    """Rules across fields of a charge revision."""
    yield from _cost_problems(revision.cost_usd, revision.cost_measurement)


def inventory_problems(inventory: SourceInventory) -> Problems:
    """Rules across fields of a source inventory."""
    if inventory.capture_end < inventory.capture_start:
        yield "capture_end", "must not be before capture_start"
    windows = [window.source_window_id for window in inventory.windows]
    if len(set(windows)) != len(windows):
        yield "windows", "must not repeat a source_window_id"


def predicate_problems(request: OutcomeDefinitionRequest) -> Problems:
    """An equality names a value; a threshold names a threshold; never both."""
    predicate = request.predicate
    if predicate.kind is PredicateKind.EQUALS:
        if predicate.value is None:
            yield "predicate.value", "is required for equals"
        if predicate.threshold is not None:
            yield "predicate.threshold", "must be absent for equals"
    else:
        if predicate.threshold is None:
            yield "predicate.threshold", f"is required for {predicate.kind}"
        if predicate.value is not None:
            yield "predicate.value", f"must be absent for {predicate.kind}"


def checked(events: Sequence[T], rules: Callable[[T], Problems]) -> list[Digested[T]]:
    """The events with their digests; ValidationFailed naming every event that breaks ``rules``."""
    errors = [
        FieldError(loc=("events", index, *field.split(".")), msg=msg)
        for index, event in enumerate(events)
        for field, msg in rules(event)
    ]
    if errors:
        raise ValidationFailed("the batch breaks evidence rules; nothing was stored", errors=errors)
    return [Digested(event, digest_of(event)) for event in events]


def no_rules(_: object) -> Problems:
    """The rules of events that have none across fields (outcome assertions)."""
    return ()
