"""Sample evidence the evidence suites store: events of run r1 of workflow wf, and tally queries."""

from collections.abc import Iterable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import attrs

from ecp_core.debugger.tally import Grouping, Tally, TallyQuery
from ecp_core.evidence.model import (
    ChargeRevision,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
)
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import definition as outcome_definition
from ecp_core.types import CostMeasurement

DAY = timedelta(days=1)


def execution(event_id: str = "e1", **fields: Any) -> ExecutionEvent:
    """An execution event of run r1 (a measured charge of 0.25); ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": "v1",
        "occurred_at": NOW,
        "run_id": "r1",
        "charge_id": f"c-{event_id}",
        "cost_usd": Decimal("0.25"),
        "cost_measurement": CostMeasurement.MEASURED,
    } | fields
    return ExecutionEvent(event_id=event_id, **values)


def outcome(event_id: str = "o1", **fields: Any) -> OutcomeEvent:
    """An outcome of run r1 asserted at :data:`NOW`; ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": "v1",
        "run_id": "r1",
        "outcome_type": "done",
        "asserted_at": NOW,
    } | fields
    return OutcomeEvent(event_id=event_id, **values)


def revision(
    event_id: str = "rev1", charge_id: str = "c-e1", cost: str | None = "0.5", offset: int = 0
) -> ChargeRevision:
    """A revision of a charge's cost (unmeasured when ``cost`` is None)."""
    return ChargeRevision(
        event_id=event_id,
        charge_id=charge_id,
        revised_at=NOW + timedelta(seconds=offset),
        cost_usd=None if cost is None else Decimal(cost),
        cost_measurement=CostMeasurement.UNMEASURED if cost is None else CostMeasurement.MEASURED,
    )


def inventory(event_id: str = "inv1", expected: int = 3) -> SourceInventory:
    """A source inventory of one capture window expecting ``expected`` events."""
    return SourceInventory(
        event_id=event_id,
        workflow_id="wf",
        workflow_version="v1",
        capture_start=NOW,
        capture_end=NOW + DAY,
        terminal_run_ids=("r1", "r2"),
        windows=(
            SourceWindow(
                source_window_id="w1",
                expected_events=expected,
                event_ids_digest="sha256:" + "0" * 64,
            ),
        ),
    )


def definition(
    tenant: str = "t1",
    version: str = "v1",
    outcome_type: str = "done",
    predicate: SuccessPredicate | None = None,
    offset: int = 0,
) -> OutcomeDefinition:
    """An outcome definition of workflow wf (by default: success when the value is true)."""
    return outcome_definition(
        predicate or SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
        tenant_id=tenant,
        workflow_id="wf",
        workflow_version=version,
        outcome_type=outcome_type,
        created_at=NOW + timedelta(seconds=offset),
    )


def query(**fields: Any) -> TallyQuery:
    """A tally query over wf from a day before :data:`NOW` to a day after; ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": None,
        "start": NOW - DAY,
        "end": NOW + DAY,
        "as_of": NOW + DAY,
        "groupings": frozenset(Grouping),
    } | fields
    return TallyQuery(**values)


def by_key(tallies: Iterable[Tally]) -> dict[Any, tuple[Any, ...]]:
    """Tallies keyed by group identity, with every count and sum (Decimals compare by value)."""
    listed = list(tallies)
    keyed = {tally.key(): attrs.astuple(tally)[5:] for tally in listed}
    assert len(keyed) == len(listed), "two rows of one group"
    return keyed
