"""Random evidence and statements for reconciliation: instants on the edges that matter.

Executions of several providers, models and projects around the statement period, priced and
revised; outcome assertions and definitions; bucket layouts with charges fitted to most buckets.
"""

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.testing.conformance._evidence import TenantEvidence
from ecp_core.testing.strategies.evidence import (
    MOSTLY_MEASURED,
    ORDER_IDS,
    costs,
    revised_costs,
)
from ecp_core.testing.strategies.evidence import amounts as evidence_amounts
from ecp_core.testing.strategies.evidence import definition as outcome_definition
from ecp_core.testing.strategies.evidence import predicates as evidence_predicates
from ecp_core.testing.strategies.statements import (
    END,
    MINUTES,
    T0,
    Bucket,
    billed_amounts,
    layouts,
    minute,
)
from ecp_core.types import CostMeasurement

# Instants around the edges that matter: the statement period's, the buckets' (whole minutes),
# one microsecond before them, and times well outside.
edges = st.sampled_from([0, 0, 1, 59, 60, 120, 180, 359, MINUTES, MINUTES + 1, -1, -60])

moments = st.one_of(
    st.builds(
        lambda m, shift: minute(m) + shift,
        edges,
        st.sampled_from([timedelta(0), timedelta(0), timedelta(microseconds=-1)]),
    ),
    st.builds(
        lambda m, s: minute(m) + timedelta(seconds=s),
        st.integers(-30, MINUTES + 30),
        st.integers(0, 59),
    ),
)

# Exponents from -18 to +2: the evidence's own spelling must not show in the report.
money = evidence_amounts(exponents=(-18, 2))

ids = st.sampled_from(ORDER_IDS)

scalars = st.sampled_from([True, False, 1, 1.0, 0, 0.5, 2.5, 1e300, "1", "a", "true", ""])

# Only the string "openai" is the provider: not another one, not its capitals, not a number, and
# not an event without one.
providers = st.sampled_from([*["openai"] * 6, "anthropic", "OpenAI", 1, None])

scope = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["m1", "m1", "m2", 2.5, True]),
        "project_id": st.sampled_from(["p1", "p1", "p2", 3, "P1"]),
        "workspace_id": st.sampled_from(["w1", "w2"]),
        "organization_id": st.just("o1"),
        "region": st.sampled_from(["eu", 1.0]),
        "seed": scalars,  # not a scope identifier
    },
)

metadata = st.builds(
    lambda provider, rest: rest if provider is None else {"provider": provider, **rest},
    providers,
    scope,
)

WORKFLOWS = ["wf", "wf", "wf", "wf2"]

VERSIONS = ["v1", "v1", "v2", "V10"]


@st.composite
def execution_fields(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an execution event but its ids."""
    cost = draw(costs(money, summary_odds=7, measurements=MOSTLY_MEASURED))
    return {
        "workflow_id": draw(st.sampled_from(WORKFLOWS)),
        "workflow_version": draw(st.sampled_from(VERSIONS)),
        "occurred_at": draw(moments),
        # Unattributed events (no run), and run ids shared across versions and workflows.
        "run_id": draw(st.one_of(st.none(), st.sampled_from(["r1", "r1", "r2", "r3"]))),
        "attempt": draw(st.sampled_from([1, 1, 2])),
        "cost_usd": cost.cost_usd,
        "cost_measurement": cost.measurement,
        "cost_role": cost.role,
        "metadata": draw(metadata),
    }


predicates = st.one_of(
    st.just(SuccessPredicate(kind=PredicateKind.EQUALS, value=True)),
    evidence_predicates(
        scalars, st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(1), Decimal(-1)])
    ),
)

# A few instants that outcomes are asserted at and reports are made at: an assertion made at the
# very instant of the report counts.
assertion_times = st.sampled_from([minute(-1), minute(0), minute(60), minute(180), END])


@st.composite
def evidence(draw: st.DrawFn, fitted: Sequence[dict[str, Any]] = ()) -> TenantEvidence:
    """One tenant's evidence: executions, outcome assertions, charge revisions, definitions.

    ``fitted`` are the fields of execution events made to match buckets; random ones join them.
    """
    executions: list[ExecutionEvent] = []
    drawn = [*fitted, *draw(st.lists(execution_fields(), min_size=5, max_size=30))]
    for index, fields in enumerate(drawn):
        charge = None if fields["cost_role"] is CostRole.SUMMARY else f"c{index}"
        executions.append(ExecutionEvent(event_id=f"e{index:02d}", charge_id=charge, **fields))
    charges = [e.charge_id for e in executions if e.charge_id is not None] or ["c0"]
    revisions = [
        ChargeRevision(
            event_id=f"rev-{revision_id}",
            # Mostly the first charges, so one charge is often revised more than once.
            charge_id=draw(st.sampled_from([*charges[:2] * 4, *charges, "unknown-charge"])),
            # Few instants, so one charge's revisions tie on revised_at and the event id decides.
            revised_at=draw(st.sampled_from([minute(1), minute(1), minute(400), minute(-5)])),
            cost_usd=cost,
            cost_measurement=measurement,
        )
        for revision_id in draw(st.lists(ids, unique=True, max_size=6))
        for cost, measurement in [draw(revised_costs(money))]
    ]
    # Runs as the events name them (workflow, version, run id), and a few no event names.
    runs = sorted({(e.workflow_id, e.workflow_version, e.run_id) for e in executions if e.run_id})
    others = st.tuples(
        st.sampled_from(WORKFLOWS), st.sampled_from(VERSIONS), st.sampled_from(["r1", "r2", "r3"])
    )
    outcomes = [
        OutcomeEvent(
            event_id=f"o-{outcome_id}",
            workflow_id=workflow_id,
            workflow_version=version,
            run_id=run_id,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            asserted_at=draw(st.one_of(assertion_times, moments)),
            value=draw(st.sampled_from([True, True, True, False, False, 1, 0.5, "a"])),
        )
        for outcome_id in draw(st.lists(ids, unique=True, min_size=2, max_size=8))
        for workflow_id, version, run_id in [
            draw(st.one_of(st.sampled_from(runs), others) if runs else others)
        ]
    ]
    definitions = [
        outcome_definition(
            tenant_id="?",
            workflow_id=workflow_id,
            workflow_version=version,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            predicate=draw(predicates),
            created_at=T0,
        )
        for workflow_id, version in itertools.product(["wf", "wf2"], ["v1", "v2", "V10"])
        if draw(st.integers(0, 3)) > 0
    ]
    return executions, outcomes, revisions, definitions


# The outcome clock: at, before, inside and after the assertions' times.
clocks = st.one_of(assertion_times, moments, st.just(END + timedelta(days=30)))


def clock_for(outcomes: Iterable[OutcomeEvent]) -> st.SearchStrategy[datetime]:
    """The outcome clock; often the very instant an outcome was asserted at (which counts)."""
    asserted = sorted({outcome.asserted_at for outcome in outcomes})
    return st.one_of(st.sampled_from(asserted), clocks) if asserted else clocks


windows = st.builds(
    lambda start, end: (minute(start), minute(end)),
    st.sampled_from([-60, 0, 0, 0, 60, 179]),
    st.sampled_from([1, 180, MINUTES, MINUTES, MINUTES, MINUTES + 60]),
).filter(lambda window: window[0] < window[1])

# Amounts as importers write them: plain notation down to 1E-18 (exponents above zero are a
# known divergence, see test_an_amount_written_with_a_positive_exponent_reports_the_same).
amounts = billed_amounts(max_exponent=0)

# Tiles end at the period's edges and around its hours.
CUTS = st.sampled_from([1, 59, 60, 120, 180, 359])


@st.composite
def fitted_fields(draw: st.DrawFn, piece: Bucket) -> dict[str, Any]:
    """A measured charge that falls into the bucket ``piece`` (at its start, or anywhere in it)."""
    start, end, model, dims = piece.start, piece.end, piece.model, piece.dimensions
    fields = draw(execution_fields())
    seconds = draw(st.one_of(st.just(0), st.integers(0, (end - start) * 60 - 1)))
    extra = {} if model else draw(st.fixed_dictionaries({}, optional={"model": st.just("m1")}))
    return fields | {
        "occurred_at": minute(start) + timedelta(seconds=seconds),
        "metadata": {"provider": "openai", **extra, **({"model": model} if model else {}), **dims},
        "cost_role": CostRole.CHARGE,
        "cost_measurement": CostMeasurement.MEASURED,
        "cost_usd": draw(amounts),
    }


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Bucket], TenantEvidence]:
    """A statement layout and evidence in which most buckets find a measured charge or more."""
    layout = draw(layouts(amounts, cuts=CUTS))
    fitted: list[dict[str, Any]] = []
    for piece in layout:
        fitted.extend(draw(st.lists(fitted_fields(piece), max_size=2)))
    return layout, draw(evidence(fitted))
