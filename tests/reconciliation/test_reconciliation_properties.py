"""Reconciliation properties over random statements and random evidence.

Statements are valid by construction (bucket periods inside the statement period, amounts with
exponents down to 1E-18); evidence mixes measured, estimated and unmeasured charges of several
providers, models, projects and times, with outcomes, definitions and charge revisions. Each
report is checked against the rules recomputed here from the generated data: which events a
bucket matches, which buckets overlap, how the dollars split and how far the bill closes.
"""

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal, localcontext
from fractions import Fraction

import attrs
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.money import EXACT
from ecp_core.reconciliation.model import ProviderStatement
from ecp_core.reconciliation.rules import quantum_for
from ecp_core.system import FixedClock
from ecp_core.testing.strategies.evidence import (
    MOSTLY_MEASURED,
    Cost,
    costs,
    exact_amounts,
    revised_costs,
)
from ecp_core.testing.strategies.statements import (
    END,
    MINUTES,
    MODELS,
    T0,
    billed_amounts,
    bucket_id,
    dimensions,
    layouts,
    minute,
    statement_data,
)
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

NOW = T0 + timedelta(days=2)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
MEASURED, ESTIMATED, UNMEASURED = (
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
    CostMeasurement.UNMEASURED,
)
WORKFLOWS = [("w1", "v1"), ("w1", "v2"), ("w2", "v1")]
RUNS = ["r1", "r2", "r3"]


amounts = billed_amounts()
# Charges: zero or more, exponents from -18 up to 0.
cost_amounts = exact_amounts()
models = st.sampled_from(MODELS)


# --- evidence -----------------------------------------------------------------------------------


@st.composite
def event_fields(draw, inside, tidy, priced=False):
    """One execution event's fields: drawn to fit the bucket ``inside`` (time, model, scope), or
    anywhere (any provider, around the period) when it is None. ``tidy`` events all have runs;
    ``priced`` ones are charges of a measured cost above zero."""
    if inside is None:
        provider = draw(st.sampled_from(["openai"] * 4 + ["anthropic", None]))
        at = minute(draw(st.integers(-30, MINUTES + 30)))
        model = draw(models)
        dims = draw(dimensions)
    else:
        provider = "openai"
        span = (inside.end - inside.start) * 60
        at = inside.period_start + timedelta(seconds=draw(st.integers(0, span - 1)))
        model = inside.model or draw(models)
        dims = draw(dimensions) | inside.dimensions
    metadata = {
        **({"provider": provider} if provider else {}),
        **({"model": model} if model else {}),
        **dims,
    }
    if priced:
        cost = Cost(CostRole.CHARGE, draw(amounts), MEASURED)
    else:
        cost = draw(costs(cost_amounts, summary_odds=7, measurements=MOSTLY_MEASURED))
    workflow_id, version = draw(st.sampled_from(WORKFLOWS))
    return {
        "workflow_id": workflow_id,
        "workflow_version": version,
        "run_id": draw(st.sampled_from(RUNS if tidy else [None, *RUNS])),
        "occurred_at": at,
        "cost_usd": cost.cost_usd,
        "cost_measurement": cost.measurement,
        "cost_role": cost.role,
        "metadata": metadata,
    }


@st.composite
def cases(draw):
    """A statement layout and the tenant's evidence.

    ``tidy`` worlds define every version and decide every run; ``close`` asks the test to bill
    each bucket exactly its measured telemetry (when it has some), so every closure state occurs.
    """
    layout = draw(layouts(amounts))
    tidy = draw(st.booleans())
    fields = []
    for b in layout:
        if draw(st.sampled_from([True, True, True, False])):
            fields.append(draw(event_fields(b, tidy, priced=True)))
        fields.extend(draw(st.lists(event_fields(b, tidy), max_size=3)))
    fields += draw(st.lists(event_fields(None, tidy), max_size=3 if tidy else 12))
    executions = [
        ExecutionEvent(
            event_id=f"e{index}",
            charge_id=None if f["cost_role"] is CostRole.SUMMARY else f"c{index}",
            **f,
        )
        for index, f in enumerate(fields)
    ]
    charges = [e.charge_id for e in executions if e.charge_id is not None]
    revisions = []
    for index in range(draw(st.integers(0, 4)) if charges else 0):
        cost, measurement = draw(revised_costs(cost_amounts))
        revisions.append(
            ChargeRevision(
                event_id=f"rev{index}",
                charge_id=draw(st.sampled_from(charges)),
                revised_at=minute(draw(st.integers(0, 3))),
                cost_usd=cost,
                cost_measurement=measurement,
            )
        )
    if tidy:
        runs = [(w, v, r) for w, v in WORKFLOWS for r in RUNS]
        defined = set(WORKFLOWS)
    else:
        runs = draw(
            st.lists(
                st.tuples(st.sampled_from(WORKFLOWS), st.sampled_from(RUNS)).map(
                    lambda pair: (*pair[0], pair[1])
                ),
                max_size=8,
            )
        )
        defined = draw(st.sets(st.sampled_from(WORKFLOWS)))
    outcomes = [
        OutcomeEvent(
            event_id=f"o{index}",
            workflow_id=w,
            workflow_version=v,
            run_id=r,
            outcome_type="done" if tidy else draw(st.sampled_from(["done", "done", "other"])),
            asserted_at=T0
            if tidy
            else draw(st.sampled_from([T0, minute(1), NOW + timedelta(seconds=1)])),
            value=draw(st.booleans()),
        )
        for index, (w, v, r) in enumerate(runs)
    ]
    return layout, executions, revisions, outcomes, defined, draw(st.booleans())


# --- the rules, recomputed ----------------------------------------------------------------------


def prices(executions, revisions):
    """Each event's (cost, measurement) after its charge's latest revision."""
    latest = {}
    for revision in revisions:
        current = latest.get(revision.charge_id)
        if current is None or (revision.revised_at, revision.event_id) > (
            current.revised_at,
            current.event_id,
        ):
            latest[revision.charge_id] = revision
    priced = {}
    for e in executions:
        revision = latest.get(e.charge_id)
        priced[e.event_id] = (
            (revision.cost_usd, revision.cost_measurement)
            if revision
            else (e.cost_usd, e.cost_measurement)
        )
    return priced


def statuses(outcomes, defined):
    """Status by (workflow, version, run) from the latest non-future outcome of the defined type."""
    deciding = {}
    for o in outcomes:
        if (
            (o.workflow_id, o.workflow_version) not in defined
            or o.outcome_type != "done"
            or o.asserted_at > NOW
        ):
            continue
        key = (o.workflow_id, o.workflow_version, o.run_id)
        if key not in deciding or (o.asserted_at, o.event_id) > (
            deciding[key].asserted_at,
            deciding[key].event_id,
        ):
            deciding[key] = o
    return {key: "success" if o.value is True else "failure" for key, o in deciding.items()}


def matches(b, e):
    """Half-open time, then the bucket's model if any, then each of its scope identifiers."""
    return (
        b.period_start <= e.occurred_at < b.period_end
        and (b.model is None or e.metadata.get("model") == b.model)
        and all(e.metadata.get(k) == v for k, v in b.dimensions.items())
    )


def could_share_an_event(a, b):
    if a.start >= b.end or b.start >= a.end:
        return False
    if a.model is not None and b.model is not None and a.model != b.model:
        return False
    return all(
        a.dimensions[k] == b.dimensions[k] for k in a.dimensions.keys() & b.dimensions.keys()
    )


def expected_closure(report):
    """The closure state by its definition, from the report's buckets and totals."""
    if any(a.status != "allocated" for a in report.allocations):
        return "unreconciled"
    if any(
        g.outcome_status == "unresolved" and g.billed_usd > 0
        for a in report.allocations
        for g in a.groups
    ):
        return "outcomes_unresolved"
    if report.totals.billed_total_usd != report.totals.telemetry_measured_usd:
        return "allocated_with_variance"
    return "reconciled"


def world(executions, revisions, outcomes, defined):
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    if executions:
        ecp.evidence.ingest_executions("t", executions)
    if revisions:
        ecp.evidence.ingest_revisions("t", revisions)
    if outcomes:
        ecp.evidence.ingest_outcomes("t", outcomes)
    for workflow_id, version in sorted(defined):
        ecp.evidence.define_outcome(
            ADMIN,
            OutcomeDefinitionRequest(
                workflow_id=workflow_id,
                workflow_version=version,
                outcome_type="done",
                predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            ),
        )
    return ecp


def total(values):
    return sum(values, Decimal(0))


@pytest.mark.spec("§9.1 bucket-matching", "§9.1 proportional-split", "§3.5 closure-state")
@given(cases())
def test_a_report_follows_the_reconciliation_rules(case):
    with localcontext(EXACT):
        check_report(*case)


def check_report(layout, executions, revisions, outcomes, defined, close):
    ecp = world(executions, revisions, outcomes, defined)
    priced = prices(executions, revisions)
    status_of = statuses(outcomes, defined)
    # The evidence: the provider's charges in the half-open statement period, priced after revisions.
    chosen = [
        e
        for e in executions
        if e.cost_role is CostRole.CHARGE
        and e.metadata.get("provider") == "openai"
        and T0 <= e.occurred_at < END
    ]

    def measured(e):
        cost, how = priced[e.event_id]
        return cost if how is MEASURED and cost is not None else None

    if close:
        telemetry = [
            total(measured(e) for e in chosen if matches(b, e) and measured(e) is not None)
            for b in layout
        ]
        layout = [
            attrs.evolve(b, amount=t) if t > 0 else b
            for b, t in zip(layout, telemetry, strict=True)
        ]
    data = statement_data(layout)
    stored, created = ecp.reconciliation.import_statement(ADMIN, structure(data, ProviderStatement))
    assert created is True
    report = ecp.reconciliation.report("t", "openai", "s1")
    totals = report.totals

    assert (
        totals.billed_total_usd
        == Decimal(data["billed_total_usd"])
        == stored.statement.billed_total_usd
    )
    assert totals.telemetry_measured_usd == total(
        measured(e) for e in chosen if measured(e) is not None
    )
    assert totals.allocated_billed_usd + totals.unreconciled_billed_usd == totals.billed_total_usd
    assert totals.telemetry_variance_usd == totals.billed_total_usd - totals.telemetry_measured_usd
    assert 0 <= totals.unbilled_telemetry_usd <= totals.telemetry_measured_usd

    ids = [bucket_id(i) for i in range(len(layout))]
    assert [a.bucket_id for a in report.allocations] == sorted(ids)
    by_id = {a.bucket_id: a for a in report.allocations}
    matched_anywhere = set()
    allocated = Decimal(0)
    for index, b in enumerate(layout):
        allocation = by_id[ids[index]]
        assert (allocation.period_start, allocation.period_end, allocation.model) == (
            b.period_start,
            b.period_end,
            b.model,
        )
        mine = [e for e in chosen if matches(b, e)]
        matched_anywhere.update(e.event_id for e in mine)
        kinds = [priced[e.event_id][1] for e in mine]
        assert (
            allocation.matched.measured_events,
            allocation.matched.estimated_events,
            allocation.matched.unmeasured_events,
        ) == (kinds.count(MEASURED), kinds.count(ESTIMATED), kinds.count(UNMEASURED))
        weights = defaultdict(Decimal)
        for e in mine:
            if measured(e) is not None:
                status = (
                    "unresolved"
                    if e.run_id is None
                    else status_of.get((e.workflow_id, e.workflow_version, e.run_id), "unresolved")
                )
                weights[(e.workflow_id, e.workflow_version, status)] += measured(e)
        assert allocation.matched.measured_usd == total(weights.values())
        others = sorted(
            ids[j] for j, o in enumerate(layout) if j != index and could_share_an_event(b, o)
        )
        assert list(allocation.overlaps_with) == others
        expected_status = (
            "overlapping"
            if others
            else "no_measured_match"
            if allocation.matched.measured_usd == 0
            else "allocated"
        )
        assert allocation.status == expected_status
        event(f"bucket {allocation.status}")
        if allocation.status != "allocated":
            assert allocation.groups == ()
            continue
        allocated += b.amount
        assert total(g.billed_usd for g in allocation.groups) == b.amount
        keys = [
            (g.workflow_id, g.workflow_version, str(g.outcome_status)) for g in allocation.groups
        ]
        assert keys == sorted(weights)
        quantum = Fraction(quantum_for(b.amount))
        for g, key in zip(allocation.groups, keys, strict=True):
            assert g.telemetry_usd == weights[key]
            assert g.billed_usd >= 0
            share = (
                Fraction(b.amount)
                * Fraction(weights[key])
                / Fraction(allocation.matched.measured_usd)
            )
            assert abs(Fraction(g.billed_usd) - share) < quantum
    assert totals.allocated_billed_usd == allocated
    assert totals.unbilled_telemetry_usd == total(
        measured(e)
        for e in chosen
        if e.event_id not in matched_anywhere and measured(e) is not None
    )
    assert totals.outcome_unresolved_usd == total(
        g.billed_usd
        for a in report.allocations
        for g in a.groups
        if g.outcome_status == "unresolved"
    )
    assert report.closure_state == expected_closure(report)
    event(f"closure state {report.closure_state}")
    assert unstructure(report)["method_version"] == "measured-cost-proportional/1"
