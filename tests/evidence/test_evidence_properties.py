"""Properties of the debugger over random evidence (the in-memory reference implementation).

- every exact total is the exact sum of its rows (timeline, cohorts, steps, versions);
- the known cost is the sum of the latest price of every charge in the window;
- an unknown-cost event never lowers an "incomplete" count, in the totals or its rows;
- ingestion is idempotent, and the report does not depend on the order events arrived in.
"""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.debugger.model import DebuggerQuery
from ecp_core.debugger.tally import Granularity
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
)
from ecp_core.money import exact_sum
from ecp_core.system import FixedClock
from ecp_core.testing.strategies.evidence import (
    EDGE_AMOUNTS,
    costs,
    exact_amounts,
    predicates,
    revised_costs,
)
from ecp_core.testing.strategies.evidence import amounts as evidence_amounts
from ecp_core.types import CostMeasurement
from ecp_core.wire import unstructure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 3, 1, tzinfo=UTC)
START, END = T0 + timedelta(hours=2), T0 + timedelta(days=2)
WINDOW_MINUTES = (END - START) // timedelta(minutes=1)
NOW = T0 + timedelta(days=1)  # some outcomes are asserted in the future
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
VERSIONS = ("1", "2", "3")
WEIGHTED_VERSIONS = ("1", "1", "1", "2", "2", "3")
RUNS = ("r1", "r2", "r3")
SUMMED = (
    "known_cost_usd",
    "measured_cost_usd",
    "estimated_cost_usd",
    "failure_tax_usd",
    "repeated_attempt_usd",
)
COUNTED = ("events", "summary_events", "repeated_attempt_events")
GAPS = ("unknown_cost_events", "unattributed_events")

moments = st.integers(0, 3 * 24 * 60).map(lambda minutes: T0 + timedelta(minutes=minutes))
# Cents up to a thousand dollars, amounts below a thousandth to 1E-18, and the edges.
amounts = st.one_of(
    evidence_amounts(
        (*EDGE_AMOUNTS, Decimal("1E-8"), Decimal("123456789012345.5")),
        mantissas=(0, 100_000),
        exponents=(-2, -2),
    ),
    exact_amounts(mantissas=(0, 10**15), exponents=(-18, -18)),
)
# A price is unknown half the time; known, it is measured or estimated.
PRICED_OR_NOT = (
    CostMeasurement.UNMEASURED,
    CostMeasurement.UNMEASURED,
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
)
# Few distinct instants, so ties (broken by event_id) are common; some lie after NOW.
instants = st.sampled_from(
    [T0, T0 + timedelta(hours=3), T0 + timedelta(hours=20), T0 + timedelta(hours=30)]
)
asserted = st.one_of(
    instants, st.integers(0, 26 * 60).map(lambda minutes: T0 + timedelta(minutes=minutes))
)
scalars = st.sampled_from([True, False, 1, 1.0, 0, 0.5, 2, "1", "x"])
outcome_values = st.one_of(st.sampled_from([True, 1, 2]), scalars)


@st.composite
def executions(draw, index):
    cost = draw(costs(amounts, summary_odds=5, measurements=PRICED_OR_NOT))
    return ExecutionEvent(
        event_id=f"e{index:03d}",
        workflow_id=draw(st.sampled_from(["w", "w", "w", "other"])),
        workflow_version=draw(st.sampled_from(WEIGHTED_VERSIONS)),
        occurred_at=draw(moments),
        run_id=draw(st.sampled_from([*RUNS, None])),
        step_id=draw(st.sampled_from(["plan", "call", None])),
        attempt=draw(st.integers(1, 3)),
        subject_id=draw(st.sampled_from(["acct-1", "acct-2", None])),
        dimensions=draw(st.dictionaries(st.just("tier"), scalars, max_size=1)),
        cost_role=cost.role,
        charge_id=None if cost.summary else f"c{index:03d}",
        cost_usd=cost.cost_usd,
        cost_measurement=cost.measurement,
    )


@st.composite
def outcomes(draw, index):
    return OutcomeEvent(
        event_id=f"o{index:03d}",
        workflow_id="w",
        workflow_version=draw(st.sampled_from(WEIGHTED_VERSIONS)),
        run_id=draw(st.sampled_from(RUNS)),
        outcome_type=draw(st.sampled_from(["resolved", "resolved", "resolved", "escalated"])),
        asserted_at=draw(asserted),
        value=draw(outcome_values),
        outcome_measurement=draw(st.sampled_from(OutcomeMeasurement)),
        maturity=draw(st.sampled_from(OutcomeMaturity)),
    )


@st.composite
def revisions(draw, index, charges):
    cost, measurement = draw(revised_costs(amounts, PRICED_OR_NOT))
    return ChargeRevision(
        event_id=f"v{index:03d}",
        charge_id=draw(st.sampled_from([*charges[:3], "c-unknown"])),  # revisions pile up
        revised_at=draw(instants),
        cost_usd=cost,
        cost_measurement=measurement,
    )


definitions = predicates(st.sampled_from([True, 1]), st.sampled_from([Decimal("0.5"), Decimal(1)]))


@st.composite
def evidence(draw):
    """A random evidence set: executions, outcomes, revisions and definitions."""
    execution_count = draw(st.integers(0, 14))
    events = [draw(executions(index)) for index in range(execution_count)]
    charges = [event.charge_id for event in events if event.charge_id is not None]
    return {
        "executions": events,
        "outcomes": [draw(outcomes(index)) for index in range(draw(st.integers(0, 10)))],
        "revisions": [draw(revisions(index, charges)) for index in range(draw(st.integers(0, 6)))],
        # Version 3 never has a definition: its runs stay unresolved.
        "definitions": draw(st.fixed_dictionaries({"1": definitions}, optional={"2": definitions})),
    }


queries = st.builds(
    lambda granularity, cohort, version: DebuggerQuery(
        workflow_id="w",
        start=START,
        end=END,
        granularity=granularity,
        cohort=cohort,
        workflow_version=version,
    ),
    st.sampled_from(Granularity),
    st.sampled_from(["subject_id", "dimension:tier"]),
    st.sampled_from([None, None, "1"]),
)


def ingest(data, order=None):
    """A fresh service holding ``data``; ``order`` (a Random) shuffles and re-batches it."""
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    for version, predicate in sorted(data["definitions"].items()):
        ecp.evidence.define_outcome(
            ADMIN,
            OutcomeDefinitionRequest(
                workflow_id="w",
                workflow_version=version,
                outcome_type="resolved",
                predicate=predicate,
            ),
        )
    kinds = [
        ("executions", ecp.evidence.ingest_executions),
        ("outcomes", ecp.evidence.ingest_outcomes),
        ("revisions", ecp.evidence.ingest_revisions),
    ]
    if order is not None:
        order.shuffle(kinds)
    for kind, store in kinds:
        events = list(data[kind])
        if order is not None:
            order.shuffle(events)
        while events:
            size = len(events) if order is None else order.randint(1, len(events))
            store("t", events[:size])
            events = events[size:]
    return ecp


def _rows(report):
    return {
        "versions": report.versions,
        "timeline": report.timeline,
        "cohorts": report.cohorts,
        "steps": report.steps,
    }


@pytest.mark.spec("§4.4 debugger-timeline")
@given(evidence(), queries)
def test_every_total_is_the_exact_sum_of_its_rows(data, query):
    report = ingest(data).debugger.report("t", query)
    totals = report.totals
    assert totals.known_cost_usd == exact_sum([totals.measured_cost_usd, totals.estimated_cost_usd])
    for name, rows in _rows(report).items():
        for field in SUMMED:
            parts = [getattr(row.accounting, field) for row in rows]
            assert exact_sum(parts) == getattr(totals, field), (name, field)
        for field in COUNTED:
            assert sum(getattr(row.accounting, field) for row in rows) == getattr(totals, field), (
                name,
                field,
            )
        for field in GAPS:
            parts = [getattr(row.accounting.incomplete, field) for row in rows]
            assert sum(parts) == getattr(totals.incomplete, field), (name, field)
    # A run lives in one version: run counts add up across versions (not across windows).
    for field in ("runs", "successful_runs", "failed_runs"):
        assert sum(getattr(row.accounting, field) for row in report.versions) == getattr(
            totals, field
        )


def _oracle(data, query):
    """Known cost, unknown-cost events and event count, straight from the rules."""
    latest = {}
    for revision in data["revisions"]:
        current = latest.get(revision.charge_id)
        if current is None or (revision.revised_at, revision.event_id) > (
            current.revised_at,
            current.event_id,
        ):
            latest[revision.charge_id] = revision
    known, unknown, count = [], 0, 0
    for event in data["executions"]:
        if event.workflow_id != "w" or not query.start <= event.occurred_at < query.end:
            continue
        if query.workflow_version is not None and event.workflow_version != query.workflow_version:
            continue
        count += 1
        if event.cost_role is CostRole.SUMMARY:
            continue
        cost = latest[event.charge_id].cost_usd if event.charge_id in latest else event.cost_usd
        if cost is None:
            unknown += 1
        else:
            known.append(cost)
    return exact_sum(known), unknown, count


@pytest.mark.spec("§2.9 charge-revisions")
@given(evidence(), queries)
def test_the_known_cost_is_the_latest_price_of_every_charge_in_the_window(data, query):
    totals = ingest(data).debugger.report("t", query).totals
    assert (totals.known_cost_usd, totals.incomplete.unknown_cost_events, totals.events) == _oracle(
        data, query
    )
    if totals.incomplete.unknown_cost_events:
        assert totals.cost_per_successful_outcome_usd is None
        assert totals.incomplete.complete is False


def _typed(value):
    """Type-aware identity of a cohort value: ``true`` and ``1`` differ, ``1`` and ``1.0`` do not."""
    if value is None or isinstance(value, bool | str):
        return (type(value).__name__, value)
    return ("number", Decimal(repr(value)))


def _landing(report, event, query):
    """The rows of ``report`` the event is counted in."""
    dimension = query.dimension
    cohort = _typed(event.subject_id if dimension is None else event.dimensions.get(dimension))
    window = query.granularity.floor(event.occurred_at)
    version = event.workflow_version
    return [
        *(row for row in report.versions if row.workflow_version == version),
        *(
            row
            for row in report.timeline
            if (row.workflow_version, row.window_start) == (version, window)
        ),
        *(
            row
            for row in report.cohorts
            if (row.workflow_version, _typed(row.cohort)) == (version, cohort)
        ),
        *(
            row
            for row in report.steps
            if (row.workflow_version, row.step_id) == (version, event.step_id)
        ),
    ]


def _gaps(accounting):
    gaps = accounting.incomplete
    return (gaps.unknown_cost_events, gaps.unresolved_runs, gaps.unattributed_events)


@pytest.mark.spec("§7 evidence-never-zero")
@given(evidence(), queries, st.data())
def test_an_unknown_cost_never_lowers_an_incomplete_count(data, query, draw):
    before = ingest(data).debugger.report("t", query)
    extra = ExecutionEvent(
        event_id="zz-unknown",
        workflow_id="w",
        workflow_version=draw.draw(st.sampled_from(VERSIONS)),
        occurred_at=draw.draw(
            st.integers(0, WINDOW_MINUTES - 1).map(lambda m: START + timedelta(minutes=m))
        ),
        run_id=draw.draw(st.sampled_from([*RUNS, "r-new", None])),
        step_id=draw.draw(st.sampled_from(["plan", None])),
        subject_id=draw.draw(st.sampled_from(["acct-1", None])),
        dimensions=draw.draw(st.dictionaries(st.just("tier"), scalars, max_size=1)),
        attempt=draw.draw(st.integers(1, 2)),
        charge_id="zz-unknown",
    )
    ecp = ingest(data)
    ecp.evidence.ingest_executions("t", [extra])
    after = ecp.debugger.report("t", query)
    lands = query.workflow_version in {None, extra.workflow_version}
    old, new = _gaps(before.totals), _gaps(after.totals)
    assert all(n >= o for n, o in zip(new, old, strict=True))
    assert new[0] == old[0] + (1 if lands else 0)
    if not lands:
        assert after == before
        return
    assert after.totals.incomplete.complete is False
    assert after.totals.cost_per_successful_outcome_usd is None
    assert after.totals.known_cost_usd == before.totals.known_cost_usd
    rows = _landing(after, extra, query)
    assert len(rows) == 4, "the event lands in one row of each view"
    old_rows = {type(row): row for row in _landing(before, extra, query)}
    for row in rows:
        old_gaps = _gaps(old_rows[type(row)].accounting) if type(row) in old_rows else (0, 0, 0)
        new_gaps = _gaps(row.accounting)
        assert all(n >= o for n, o in zip(new_gaps, old_gaps, strict=True)), row
        assert new_gaps[0] == old_gaps[0] + 1
        assert row.accounting.incomplete.complete is False
        assert row.accounting.cost_per_successful_outcome_usd is None


@pytest.mark.spec("C6 evidence-ingestion")
@given(evidence(), queries)
def test_ingesting_the_same_evidence_twice_changes_no_report(data, query):
    ecp = ingest(data)
    once = unstructure(ecp.debugger.report("t", query))
    for kind, store in (
        ("executions", ecp.evidence.ingest_executions),
        ("outcomes", ecp.evidence.ingest_outcomes),
        ("revisions", ecp.evidence.ingest_revisions),
    ):
        if data[kind]:
            result = store("t", data[kind])
            assert (result.received, result.stored, result.replayed) == (
                len(data[kind]),
                0,
                len(data[kind]),
            )
    assert unstructure(ecp.debugger.report("t", query)) == once


@pytest.mark.spec("C6 evidence-ingestion")
@given(evidence(), queries, st.randoms(use_true_random=False))
def test_the_report_does_not_depend_on_arrival_order(data, query, order):
    expected = json.dumps(unstructure(ingest(data).debugger.report("t", query)), sort_keys=True)
    shuffled = json.dumps(
        unstructure(ingest(data, order).debugger.report("t", query)), sort_keys=True
    )
    assert shuffled == expected
