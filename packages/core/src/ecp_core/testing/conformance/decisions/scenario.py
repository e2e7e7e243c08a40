"""A known comparison: forty runs a version in two capture windows, with revisions and inventories."""

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.selection import ids_digest
from ecp_core.evidence.model import (
    ChargeRevision,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    SourceInventory,
    SourceWindow,
)
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance.decisions.samples import END, START
from ecp_core.testing.samples import NOW
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure

RUNS = 40

ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")


def scenario_events() -> tuple[list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision]]:
    """Forty runs a version in two capture windows; one charge revised twice.

    v1 accepts half at 1.00 a run (run 0 at 1E-8, run 1 with a second charge), v2 accepts all
    at 0.80.
    """
    events: list[ExecutionEvent] = []
    assertions: list[OutcomeEvent] = []
    for version, price in (("v1", "1.00"), ("v2", "0.80")):
        for i in range(RUNS):
            run = f"{version}-r{i:03d}"
            cost = "1E-8" if (version, i) == ("v1", 0) else price
            events.append(
                ExecutionEvent(
                    event_id=f"{version}-e{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    occurred_at=START + timedelta(minutes=i, microseconds=i),
                    cost_usd=Decimal(cost),
                    cost_measurement=CostMeasurement.MEASURED,
                    charge_id=f"{version}-c{i:03d}",
                    source_window_id=f"{version}-sw{i % 2}",
                )
            )
            assertions.append(
                OutcomeEvent(
                    event_id=f"{version}-o{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    outcome_type="done",
                    asserted_at=START + timedelta(days=1),
                    value=version == "v2" or i % 2 == 0,
                )
            )
    events.append(
        ExecutionEvent(
            event_id="v1-e001b",
            workflow_id="w",
            workflow_version="v1",
            run_id="v1-r001",
            occurred_at=START,
            cost_usd=Decimal("0.2"),
            cost_measurement=CostMeasurement.MEASURED,
            charge_id="v1-c001b",
            source_window_id="v1-sw1",
        )
    )
    events.append(
        ExecutionEvent(  # at the request window's exclusive end
            event_id="v2-end",
            workflow_id="w",
            workflow_version="v2",
            run_id="v2-r999",
            occurred_at=END,
            cost_usd=Decimal(1),
            cost_measurement=CostMeasurement.MEASURED,
            charge_id="v2-end",
            source_window_id="v2-sw0",
        )
    )
    revised = [
        ChargeRevision(
            event_id=f"rev{n}",
            charge_id="v1-c002",
            revised_at=START + timedelta(days=2),
            cost_usd=Decimal(cost),
            cost_measurement=CostMeasurement.MEASURED,
        )
        for n, cost in ((1, "0.5"), (2, "123456789012345.123456789012345678"))
    ]
    return events, assertions, revised


def build_scenario(unit_of_work: UnitOfWorkFactory) -> Ecp:
    """An :class:`Ecp` over the store holding the scenario's evidence, definitions and inventories."""
    ecp = Ecp.build(
        unit_of_work, signer=None, clock=FixedClock(NOW + timedelta(days=1)), ids=SequentialIds("d")
    )
    events, assertions, revised = scenario_events()
    for version in ("v1", "v2"):
        ecp.evidence.define_outcome(
            ACTOR,
            structure(
                {
                    "workflow_id": "w",
                    "workflow_version": version,
                    "outcome_type": "done",
                    "predicate": {"kind": "equals", "value": True},
                },
                OutcomeDefinitionRequest,
            ),
        )
    ecp.evidence.ingest_executions("t", events)
    ecp.evidence.ingest_outcomes("t", assertions)
    ecp.evidence.ingest_revisions("t", revised)
    by_window: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for item in events:
        assert item.source_window_id is not None
        by_window[item.workflow_version, item.source_window_id].append(item.event_id)
    ecp.evidence.ingest_inventories(
        "t",
        [
            SourceInventory(
                event_id=f"inv-{version}",
                workflow_id="w",
                workflow_version=version,
                capture_start=START,
                capture_end=END,
                terminal_run_ids=tuple(
                    sorted({e.run_id for e in events if e.workflow_version == version and e.run_id})
                ),
                windows=tuple(
                    SourceWindow(
                        source_window_id=name,
                        expected_events=len(ids),
                        event_ids_digest=ids_digest(ids),
                    )
                    for (v, name), ids in sorted(by_window.items())
                    if v == version
                ),
            )
            for version in ("v1", "v2")
        ],
    )
    return ecp
