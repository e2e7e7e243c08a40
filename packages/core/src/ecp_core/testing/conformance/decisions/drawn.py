"""Random evidence of workflows wf and wf2 around a comparison window, and comparisons over it.

Instants sit on and one microsecond beside the window's ends; versions and outcome ids differ
in case only; charges are revised, some of unknown charges; sources declare inventories honestly
or not.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs
from hypothesis import strategies as st

from ecp_core.decisions.selection import Selection, VersionWindow, ids_digest
from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
)
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._evidence import store_evidence
from ecp_core.testing.conformance.decisions.samples import MICRO
from ecp_core.testing.strategies.evidence import (
    MOSTLY_MEASURED,
    amounts,
    costs,
    definition,
    revised_costs,
)

BASE = datetime(2026, 11, 1, 6, 0, 0, 250_000, tzinfo=UTC)  # microseconds on purpose

W_START, W_END = BASE, BASE + timedelta(hours=6)

AS_OF = W_END + timedelta(days=1)

moments = st.one_of(
    st.sampled_from(
        [W_START, W_END, W_START - MICRO, W_START + MICRO, W_END - MICRO, W_END + MICRO]
    ),
    st.builds(lambda seconds: BASE + timedelta(seconds=seconds), st.integers(-3600, 8 * 3600)),
)

assertion_moments = st.one_of(moments, st.just(AS_OF), st.just(AS_OF + MICRO))

money = amounts(
    [
        Decimal(0),
        Decimal("0.000"),
        Decimal("1E-8"),
        Decimal("0.25"),
        Decimal("1.00"),
        Decimal(999999999999999),
    ],
    exponents=(-12, 0),
)

versions = st.sampled_from(["v1", "v1", "v1", "v2", "v2", "v2", "V1"])

workflows = st.sampled_from(["wf"] * 6 + ["wf2"])

runs = st.sampled_from(["r1", "r2", "r3", "r4", "r5", "r6", "R1"])

outcome_values = st.sampled_from([True, True, False, 1, 0.5, 2, "yes"])


@st.composite
def executions(draw: st.DrawFn, index: int) -> ExecutionEvent:
    """Execution event ``index``."""
    cost = draw(
        costs(
            money,
            summary_odds=7,
            measurements=MOSTLY_MEASURED,
        )
    )
    return ExecutionEvent(
        event_id=f"e{index:02d}",
        workflow_id=draw(workflows),
        workflow_version=draw(versions),
        occurred_at=draw(moments),
        run_id=draw(st.one_of(st.none(), runs, runs)),
        cost_usd=cost.cost_usd,
        cost_measurement=cost.measurement,
        cost_role=cost.role,
        charge_id=None if cost.summary else f"c{index:02d}",
        source_window_id=draw(st.sampled_from([None, "w1", "w2", "w2"])),
    )


@st.composite
def outcomes(draw: st.DrawFn, index: int) -> OutcomeEvent:
    """Outcome event ``index`` (its id's case varies)."""
    return OutcomeEvent(
        event_id=draw(st.sampled_from(["o", "O", "p"])) + f"{index:02d}",  # ties of case
        workflow_id=draw(workflows),
        workflow_version=draw(versions),
        run_id=draw(st.one_of(runs, st.just("r9"))),
        outcome_type=draw(st.sampled_from(["done", "done", "done", "other"])),
        asserted_at=draw(assertion_moments),
        value=draw(outcome_values),
        outcome_measurement=draw(
            st.sampled_from([OutcomeMeasurement.MEASURED] * 3 + list(OutcomeMeasurement))
        ),
        maturity=draw(st.sampled_from(OutcomeMaturity)),
    )


@st.composite
def revisions(draw: st.DrawFn, index: int, charges: list[str]) -> ChargeRevision:
    """Revision ``index`` of one of ``charges`` (or of an unknown charge)."""
    cost, measurement = draw(revised_costs(money))
    return ChargeRevision(
        event_id=f"rev{index}",
        charge_id=draw(st.sampled_from([*charges, "c-unknown"])),
        revised_at=draw(moments),
        cost_usd=cost,
        cost_measurement=measurement,
    )


predicates = st.sampled_from(
    [
        SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
        SuccessPredicate(kind=PredicateKind.AT_LEAST, threshold=Decimal("0.5")),
    ]
)

Comparison = tuple[str, dict[str, Any], str]
"""A comparison: the candidate version, the policy's JSON, the inventory mode."""


@attrs.frozen
class Evidence:
    """One tenant's evidence; definitions as (workflow, version, outcome type, predicate)."""

    executions: tuple[ExecutionEvent, ...]
    outcomes: tuple[OutcomeEvent, ...]
    revisions: tuple[ChargeRevision, ...]
    definitions: tuple[tuple[str, str, str, SuccessPredicate], ...]  # workflow, version, type


@st.composite
def evidence(draw: st.DrawFn) -> Evidence:
    """Random evidence of workflows wf and wf2 around the comparison window."""
    size = draw(st.integers(0, 40))
    events = tuple(draw(executions(index)) for index in range(size))
    charges = [e.charge_id for e in events if e.charge_id is not None] or ["c00"]
    asserted = tuple(draw(outcomes(index)) for index in range(draw(st.integers(0, 30))))
    revised = tuple(draw(revisions(index, charges)) for index in range(draw(st.integers(0, 6))))
    definitions = tuple(
        (workflow, version, draw(st.sampled_from(["done", "done", "other"])), draw(predicates))
        for workflow, version in [("wf", "v1"), ("wf", "v2"), ("wf", "V1"), ("wf2", "v1")]
        if draw(st.integers(0, 4)) > 0
    )
    return Evidence(events, asserted, revised, definitions)


@st.composite
def comparisons(draw: st.DrawFn) -> Comparison:
    """A comparison over the window, optionally with an inventory for both versions."""
    candidate = draw(st.sampled_from(["v2", "v2", "v1"]))
    policy = {
        "min_success_rate": draw(st.sampled_from([0.5, 0.0, None])),
        "min_runs": 2,
        "min_outcome_coverage": draw(st.sampled_from([0.0, 0.5, 0.9])),
        "allow_estimated_cost": draw(st.booleans()),
        "max_cost_growth": draw(st.sampled_from([0.1, 10.0])),
    }
    inventories = draw(st.sampled_from(["none", "none", "honest", "missing_run", "fewer_events"]))
    return candidate, policy, inventories


def load(unit_of_work: UnitOfWorkFactory, tenant: str, data: Evidence) -> None:
    """Store ``data`` as ``tenant``'s evidence."""
    definitions = [
        definition(
            predicate,
            tenant_id=tenant,
            workflow_id=workflow,
            workflow_version=version,
            outcome_type=outcome_type,
            created_at=BASE,
            created_by="admin",
        )
        for workflow, version, outcome_type, predicate in data.definitions
    ]
    store_evidence(
        unit_of_work, tenant, data.executions, data.outcomes, data.revisions, definitions
    )


def inventories_of(data: Evidence, mode: str, compared: list[str]) -> list[SourceInventory]:
    """Inventories of the window's events as declared by a source (honestly, or not)."""
    made: list[SourceInventory] = []
    for version in compared:
        window = VersionWindow(
            workflow_id="wf", workflow_version=version, start=W_START, end=W_END, end_inclusive=True
        )
        chosen = [e for e in data.executions if window.holds(e)]
        by_window: defaultdict[str, list[str]] = defaultdict(list)
        for item in chosen:
            if item.source_window_id is not None:
                by_window[item.source_window_id].append(item.event_id)
        listed = sorted({e.run_id for e in chosen if e.run_id is not None})
        if mode == "missing_run":
            listed.append("r-lost")
        made.append(
            SourceInventory(
                event_id=f"inv-{version}",
                workflow_id="wf",
                workflow_version=version,
                capture_start=W_START,
                capture_end=W_END,
                terminal_run_ids=tuple(listed),
                windows=tuple(
                    SourceWindow(
                        source_window_id=name,
                        expected_events=len(ids) + (mode == "fewer_events"),
                        event_ids_digest=ids_digest(ids),
                    )
                    for name, ids in sorted(by_window.items())
                ),
            )
        )
    return made


def multiset(entries: Iterable[Digested[Any]]) -> Counter[tuple[str, str]]:
    """Entries as a multiset of (event id, digest)."""
    return Counter((entry.item.event_id, entry.digest) for entry in entries)


def selected(unit_of_work: UnitOfWorkFactory, tenant: str, window: VersionWindow) -> Selection:
    """What the store selects for ``window``."""
    with unit_of_work() as tx:
        return tx.evidence.select(tenant, window, limit=1000)
