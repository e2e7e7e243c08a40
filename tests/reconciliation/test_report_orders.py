"""Report rows come out in the order docs/reconciliation.md and docs/evidence.md state.

Each order is total: rows with equal figures still have one place, so shuffling the input never
changes the output. The stated keys are written out here from the documents, not imported.
"""

import itertools
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.debugger.model import DebuggerQuery
from ecp_core.debugger.service import _Shaped
from ecp_core.debugger.tally import Granularity, Grouping, OutcomeStatus, Tally
from ecp_core.reconciliation.matching import PricedEvent
from ecp_core.reconciliation.model import (
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
)
from ecp_core.reconciliation.normalizer import normalize_cost_page, parse_page
from ecp_core.reconciliation.rules import allocations
from ecp_core.types import CostMeasurement

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
# Ids and versions whose code-point order differs from numeric and case-blind order.
NAMES = ["10", "9", "B", "a", "a-1", "a_1", "é"]
MONEY = [Decimal(0), Decimal(1), Decimal("1.00"), Decimal(2)]


def strictly_increasing(keys):
    return all(a < b for a, b in itertools.pairwise(keys))


# --- reconciliation ---------------------------------------------------------------------------


@st.composite
def statements_and_events(draw):
    ids = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    buckets = [
        ProviderBucket(
            bucket_id=bucket_id,
            period_start=T0 + HOUR * (start := draw(st.integers(0, 3))),
            period_end=T0 + HOUR * (start + draw(st.integers(1, 3))),
            amount_usd=draw(st.sampled_from([Decimal(1), Decimal("0.10"), Decimal(7)])),
            model=draw(st.sampled_from([None, "m1", "m2", "m3"])),
        )
        for bucket_id in ids
    ]
    statement = ProviderStatement(
        statement_id="s-1",
        provider="p",
        period_start=T0,
        period_end=T0 + 6 * HOUR,
        currency=Currency.USD,
        billed_total_usd=sum((bucket.amount_usd for bucket in buckets), Decimal(0)),
        source_kind=SourceKind.MANUAL,
        buckets=tuple(buckets),
    )
    events = [
        PricedEvent(
            workflow_id=draw(st.sampled_from(NAMES[:3])),
            workflow_version=draw(st.sampled_from(NAMES[:3])),
            occurred_at=T0 + HOUR * draw(st.integers(0, 5)),
            model=draw(st.sampled_from(["m1", "m2", "m3"])),
            scope={},
            cost_usd=draw(st.sampled_from([None, Decimal(1), Decimal("1.0"), Decimal(3)])),
            cost_measurement=draw(st.sampled_from(CostMeasurement)),
            outcome_status=draw(st.sampled_from(OutcomeStatus)),
        )
        for _ in range(draw(st.integers(0, 12)))
    ]
    return statement, events


@given(statements_and_events(), st.randoms(use_true_random=False))
def test_the_reconciliation_report_has_one_order_whatever_the_input_order(case, rng):
    statement, events = case
    found, totals = allocations(statement, events)
    buckets, shuffled = list(statement.buckets), list(events)
    rng.shuffle(buckets)
    rng.shuffle(shuffled)
    again = allocations(attrs.evolve(statement, buckets=tuple(buckets)), shuffled)
    assert again == (found, totals)
    assert strictly_increasing([allocation.bucket_id for allocation in found])
    for allocation in found:
        assert strictly_increasing(list(allocation.overlaps_with))
        keys = [
            (g.workflow_id, g.workflow_version, str(g.outcome_status)) for g in allocation.groups
        ]
        assert strictly_increasing(keys)


def test_outcome_statuses_sort_as_their_names():
    assert sorted(OutcomeStatus) == [
        OutcomeStatus.FAILURE,
        OutcomeStatus.SUCCESS,
        OutcomeStatus.UNRESOLVED,
    ]


@st.composite
def cost_pages(draw):
    """Buckets that share a start and a project but not an end, in any order."""
    data = []
    for _ in range(draw(st.integers(1, 6))):
        start = T0 + HOUR * draw(st.integers(0, 2))
        end = start + HOUR * draw(st.integers(1, 3))
        projects = draw(
            st.lists(st.sampled_from([None, "proj_b", "proj_a", "Proj"]), min_size=1, max_size=3)
        )
        data.append(
            {
                "object": "bucket",
                "start_time": int(start.timestamp()),
                "end_time": int(end.timestamp()),
                "results": [
                    {"amount": {"value": 1.5, "currency": "usd"}, "line_item": "x"}
                    | ({} if project is None else {"project_id": project})
                    for project in projects
                ],
            }
        )
    return {"object": "page", "data": data, "has_more": False, "next_page": None}


def stated_bucket_order(bucket):
    project = bucket.provider_dimensions.get("project_id")
    return (bucket.period_start, project is not None, project or "", bucket.period_end)


@given(cost_pages(), st.randoms(use_true_random=False))
def test_a_normalized_page_has_one_bucket_order_whatever_the_page_order(page, rng):
    statement = normalize_cost_page(parse_page(json.dumps(page)), provider="openai")
    shuffled = json.loads(json.dumps(page))
    rng.shuffle(shuffled["data"])
    for bucket in shuffled["data"]:
        rng.shuffle(bucket["results"])
    assert normalize_cost_page(parse_page(json.dumps(shuffled)), provider="openai") == statement
    assert strictly_increasing([stated_bucket_order(bucket) for bucket in statement.buckets])


# --- the debugger ----------------------------------------------------------------------------

figures = st.fixed_dictionaries(
    {
        "failure_tax_usd": st.sampled_from(MONEY),
        "repeated_attempt_usd": st.sampled_from(MONEY),
        "failed_runs": st.integers(0, 2),
        "runs": st.integers(0, 2),
    }
)
COHORTS = [None, False, True, 0, 1, 2.5, "1", "x", "X"]
STEPS = [None, "plan", "call", "Z"]
WINDOWS = [T0, T0 + HOUR, T0 + 2 * HOUR]


@st.composite
def tallies(draw):
    versions = st.sampled_from(NAMES)
    keyed = [
        (Grouping.VERSION, {"workflow_version": v})
        for v in draw(st.lists(versions, unique=True, max_size=5))
    ]
    for grouping, field, values in (
        (Grouping.VERSION_WINDOW, "window_start", WINDOWS),
        (Grouping.VERSION_COHORT, "cohort", COHORTS),
        (Grouping.VERSION_STEP, "step_id", STEPS),
    ):
        pairs = draw(
            st.lists(st.tuples(versions, st.sampled_from(values)), unique=True, max_size=8)
        )
        keyed += [(grouping, {"workflow_version": v, field: value}) for v, value in pairs]
    return [Tally(grouping=grouping, **key, **draw(figures)) for grouping, key in keyed]


def cohort_rank(value):
    """Stated: null first, then false before true, then numbers by value, then text."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int | float):
        return (2, Decimal(repr(value)))
    return (3, value)


def exposure(row):
    """Stated: most failure tax, then most repeated-attempt spend, then most failed runs."""
    a = row.accounting
    return (-a.failure_tax_usd, -a.repeated_attempt_usd, -a.failed_runs)


QUERY = DebuggerQuery(workflow_id="w", start=T0, end=T0 + 3 * HOUR, granularity=Granularity.HOUR)


@given(tallies(), st.randoms(use_true_random=False))
def test_debugger_rows_have_one_order_whatever_the_input_order(found, rng):
    shaped = _Shaped(QUERY, found, {"9"})
    shuffled = list(found)
    rng.shuffle(shuffled)
    again = _Shaped(QUERY, shuffled, {"9"})
    for rows in ("versions", "timeline", "cohorts", "steps"):
        assert getattr(again, rows) == getattr(shaped, rows)
    assert strictly_increasing([(*exposure(r), r.workflow_version) for r in shaped.versions])
    assert strictly_increasing([(r.window_start, r.workflow_version) for r in shaped.timeline])
    assert strictly_increasing(
        [(r.workflow_version, cohort_rank(r.cohort)) for r in shaped.cohorts]
    )
    assert strictly_increasing(
        [
            (*exposure(r), r.workflow_version, (r.step_id is not None, r.step_id or ""))
            for r in shaped.steps
        ]
    )
