"""Reconciliation properties over random statements and random evidence.

Statements are valid by construction (bucket periods inside the statement period, amounts with
exponents down to 1E-18); evidence mixes measured, estimated and unmeasured charges of several
providers, models, projects and times, with outcomes, definitions and charge revisions. Each
report is checked against the rules recomputed here from the generated data: which events a
bucket matches, which buckets overlap, how the dollars split and how far the bill closes.
"""

import itertools
import math
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta, timezone
from decimal import Context, Decimal, Inexact, Rounded, localcontext
from fractions import Fraction

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.evidence.model import (
    ChargeRevision,
    CostMeasurement,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.reconciliation.model import ProviderStatement
from ecp_core.reconciliation.rules import quantum_for, split, statement_digest
from ecp_core.system import FixedClock
from ecp_core.wire import structure, unstructure

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MINUTES = 360  # the statement period is [T0, T0 + 6h)
END = T0 + timedelta(minutes=MINUTES)
NOW = T0 + timedelta(days=2)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
MEASURED, ESTIMATED, UNMEASURED = (
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
    CostMeasurement.UNMEASURED,
)
EXACT = Context(prec=100, traps=[Inexact, Rounded])
"""The test's own arithmetic never rounds either."""
WORKFLOWS = [("w1", "v1"), ("w1", "v2"), ("w2", "v1")]
RUNS = ["r1", "r2", "r3"]


def minute(n):
    return T0 + timedelta(minutes=n)


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def decimals(low_mantissa=1, high_exponent=2):
    """Exact amounts with exponents from -18 up (at most 15 integer digits)."""
    return st.builds(
        lambda m, e: Decimal(m).scaleb(e),
        st.integers(low_mantissa, 10**6),
        st.integers(-18, high_exponent),
    )


amounts = decimals()
costs = decimals(low_mantissa=0, high_exponent=0)
models = st.sampled_from([None, None, "m1", "m2"])
dimensions = st.fixed_dictionaries(
    {}, optional={"project_id": st.sampled_from(["p1", "p2"]), "workspace_id": st.just("w1")}
)


# --- statements ---------------------------------------------------------------------------------


@st.composite
def random_bucket(draw):
    start = draw(st.integers(0, MINUTES - 1))
    end = draw(st.integers(start + 1, MINUTES))
    return {
        "start": minute(start),
        "end": minute(end),
        "amount": draw(amounts),
        "model": draw(models),
        "dims": draw(dimensions),
    }


@st.composite
def layouts(draw):
    """Buckets that tile the period (some pieces split by project or by model, some pieces left
    out), plus a few placed at random, which may overlap the others."""
    cuts = sorted(draw(st.sets(st.integers(1, MINUTES - 1), max_size=4)))
    edges = [0, *cuts, MINUTES]
    drawn = []
    for start, end in itertools.pairwise(edges):
        shape = draw(st.sampled_from(["one", "one", "one", "by project", "by model", "none"]))
        model = draw(models)
        if shape == "one":
            drawn.append(
                {
                    "start": minute(start),
                    "end": minute(end),
                    "amount": draw(amounts),
                    "model": model,
                    "dims": draw(dimensions),
                }
            )
        elif shape == "by project":
            drawn.extend(
                {
                    "start": minute(start),
                    "end": minute(end),
                    "amount": draw(amounts),
                    "model": model,
                    "dims": {"project_id": project},
                }
                for project in ("p1", "p2")
            )
        elif shape == "by model":
            dims = draw(dimensions)
            drawn.extend(
                {
                    "start": minute(start),
                    "end": minute(end),
                    "amount": draw(amounts),
                    "model": each,
                    "dims": dims,
                }
                for each in ("m1", "m2")
            )
    extra = draw(st.sampled_from([0, 0, 0, 0, 1, 2]))
    drawn.extend(
        draw(
            st.lists(
                random_bucket(), min_size=max(extra, 0 if drawn else 1), max_size=max(extra, 1)
            )
        )
    )
    return drawn


def statement_data(layout):
    """The JSON of a statement of ``layout``'s buckets (ids ``b0``, ``b1``, ... in layout order)."""
    wire_buckets = []
    for index, b in enumerate(layout):
        item = {
            "bucket_id": f"b{index}",
            "period_start": iso(b["start"]),
            "period_end": iso(b["end"]),
            "amount_usd": str(b["amount"]),
        }
        if b["model"] is not None:
            item["model"] = b["model"]
        if b["dims"]:
            item["provider_dimensions"] = b["dims"]
        wire_buckets.append(item)
    with localcontext(EXACT):
        total = sum((b["amount"] for b in layout), Decimal(0))
    return {
        "statement_id": "s1",
        "provider": "openai",
        "period_start": iso(T0),
        "period_end": iso(END),
        "currency": "USD",
        "billed_total_usd": str(total),
        "source_kind": "cost_api",
        "buckets": wire_buckets,
    }


statements = layouts().map(statement_data)


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
        span = int((inside["end"] - inside["start"]).total_seconds())
        at = inside["start"] + timedelta(seconds=draw(st.integers(0, span - 1)))
        model = inside["model"] or draw(models)
        dims = draw(dimensions) | inside["dims"]
    metadata = {
        **({"provider": provider} if provider else {}),
        **({"model": model} if model else {}),
        **dims,
    }
    measurement = (
        MEASURED if priced else draw(st.sampled_from([MEASURED] * 5 + [ESTIMATED, UNMEASURED]))
    )
    workflow_id, version = draw(st.sampled_from(WORKFLOWS))
    return {
        "workflow_id": workflow_id,
        "workflow_version": version,
        "run_id": draw(st.sampled_from(RUNS if tidy else [None, *RUNS])),
        "occurred_at": at,
        "cost_usd": None if measurement is UNMEASURED else draw(amounts if priced else costs),
        "cost_measurement": measurement,
        "cost_role": CostRole.CHARGE
        if priced
        else draw(st.sampled_from([CostRole.CHARGE] * 6 + [CostRole.SUMMARY])),
        "metadata": metadata,
    }


@st.composite
def cases(draw):
    """A statement layout and the tenant's evidence.

    ``tidy`` worlds define every version and decide every run; ``close`` asks the test to bill
    each bucket exactly its measured telemetry (when it has some), so every closure state occurs.
    """
    layout = draw(layouts())
    tidy = draw(st.booleans())
    fields = []
    for b in layout:
        if draw(st.sampled_from([True, True, True, False])):
            fields.append(draw(event_fields(b, tidy, priced=True)))
        fields.extend(draw(st.lists(event_fields(b, tidy), max_size=3)))
    fields += draw(st.lists(event_fields(None, tidy), max_size=3 if tidy else 12))
    executions = []
    for index, f in enumerate(fields):
        if f["cost_role"] is CostRole.SUMMARY:
            executions.append(
                ExecutionEvent(
                    event_id=f"e{index}", **f | {"cost_usd": None, "cost_measurement": UNMEASURED}
                )
            )
        else:
            executions.append(ExecutionEvent(event_id=f"e{index}", charge_id=f"c{index}", **f))
    charges = [e.charge_id for e in executions if e.charge_id is not None]
    revisions = []
    for index in range(draw(st.integers(0, 4)) if charges else 0):
        measurement = draw(st.sampled_from([MEASURED, ESTIMATED, UNMEASURED]))
        revisions.append(
            ChargeRevision(
                event_id=f"rev{index}",
                charge_id=draw(st.sampled_from(charges)),
                revised_at=minute(draw(st.integers(0, 3))),
                cost_usd=None if measurement is UNMEASURED else draw(costs),
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
        b["start"] <= e.occurred_at < b["end"]
        and (b["model"] is None or e.metadata.get("model") == b["model"])
        and all(e.metadata.get(k) == v for k, v in b["dims"].items())
    )


def could_share_an_event(a, b):
    if a["start"] >= b["end"] or b["start"] >= a["end"]:
        return False
    if a["model"] is not None and b["model"] is not None and a["model"] != b["model"]:
        return False
    return all(a["dims"][k] == b["dims"][k] for k in a["dims"].keys() & b["dims"].keys())


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
        for b in layout:
            telemetry = total(
                measured(e) for e in chosen if matches(b, e) and measured(e) is not None
            )
            if telemetry > 0:
                b["amount"] = telemetry
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

    assert [a.bucket_id for a in report.allocations] == sorted(f"b{i}" for i in range(len(layout)))
    by_id = {a.bucket_id: a for a in report.allocations}
    matched_anywhere = set()
    allocated = Decimal(0)
    for index, b in enumerate(layout):
        allocation = by_id[f"b{index}"]
        assert (allocation.period_start, allocation.period_end, allocation.model) == (
            b["start"],
            b["end"],
            b["model"],
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
            f"b{j}" for j, o in enumerate(layout) if j != index and could_share_an_event(b, o)
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
        allocated += b["amount"]
        assert total(g.billed_usd for g in allocation.groups) == b["amount"]
        keys = [
            (g.workflow_id, g.workflow_version, str(g.outcome_status)) for g in allocation.groups
        ]
        assert keys == sorted(weights)
        quantum = Fraction(quantum_for(b["amount"]))
        for g, key in zip(allocation.groups, keys, strict=True):
            assert g.telemetry_usd == weights[key]
            assert g.billed_usd >= 0
            share = (
                Fraction(b["amount"])
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


# --- the digest ---------------------------------------------------------------------------------


def respelled(data, rng, offsets):
    """The same statement with buckets shuffled and every time written in another offset."""

    def spell(text):
        moment = datetime.fromisoformat(text)
        return moment.astimezone(timezone(timedelta(minutes=rng.choice(offsets)))).isoformat()

    copy = dict(
        data, period_start=spell(data["period_start"]), period_end=spell(data["period_end"])
    )
    copy["buckets"] = [
        dict(b, period_start=spell(b["period_start"]), period_end=spell(b["period_end"]))
        for b in data["buckets"]
    ]
    rng.shuffle(copy["buckets"])
    return copy


def test_the_respelling_helper_really_respells():
    data = {
        "period_start": iso(T0),
        "period_end": iso(END),
        "buckets": [
            {"period_start": iso(T0), "period_end": iso(END)},
            {"period_start": iso(T0), "period_end": iso(END)},
        ],
    }
    assert respelled(data, random.Random(1), [120])["period_start"] == "2026-11-01T02:00:00+02:00"


@pytest.mark.spec("§9.1 statement-normalized")
@given(
    statements,
    st.randoms(use_true_random=False),
    st.lists(st.integers(-14 * 60 + 1, 14 * 60 - 1), min_size=1, max_size=4),
)
def test_the_digest_ignores_bucket_order_and_time_zone_spelling(data, rng, offsets):
    other = respelled(data, rng, offsets)
    digest = statement_digest(structure(data, ProviderStatement))
    assert statement_digest(structure(other, ProviderStatement)) == digest
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    first, created = ecp.reconciliation.import_statement(ADMIN, structure(other, ProviderStatement))
    assert (created, first.digest) == (True, digest)
    replay, created = ecp.reconciliation.import_statement(ADMIN, structure(data, ProviderStatement))
    assert (created, replay.digest) == (False, digest)


@pytest.mark.spec("§2.9 statement-digest")
@given(statements, st.integers(0, 20))
def test_the_digest_changes_with_any_amount(data, which):
    with localcontext(EXACT):
        index = which % len(data["buckets"])
        changed = dict(data, buckets=[dict(b) for b in data["buckets"]])
        bump = Decimal("1E-18")
        changed["buckets"][index]["amount_usd"] = str(
            Decimal(changed["buckets"][index]["amount_usd"]) + bump
        )
        changed["billed_total_usd"] = str(Decimal(data["billed_total_usd"]) + bump)
    assert statement_digest(structure(changed, ProviderStatement)) != statement_digest(
        structure(data, ProviderStatement)
    )


# --- split --------------------------------------------------------------------------------------


@st.composite
def weights_lists(draw):
    """One to eight weights of zero or more, at least one above zero."""
    rest = draw(st.lists(decimals(low_mantissa=0, high_exponent=3), max_size=7))
    rest.insert(draw(st.integers(0, len(rest))), draw(decimals(high_exponent=3)))
    return rest


@pytest.mark.spec("§9.1 proportional-split")
@given(amounts, weights_lists())
def test_split_is_exact_and_each_part_within_one_quantum(amount, weights):
    parts = split(amount, weights)
    assert len(parts) == len(weights)
    with localcontext(EXACT):
        assert total(parts) == amount
    quantum = Fraction(quantum_for(amount))
    assert quantum <= Fraction(1, 10**12)
    weight_sum = sum(Fraction(w) for w in weights)
    shares = [Fraction(amount) * Fraction(w) / weight_sum for w in weights]
    for part, share, weight in zip(parts, shares, weights, strict=True):
        assert part >= 0
        assert abs(Fraction(part) - share) < quantum
        assert (Fraction(part) / quantum).denominator == 1  # a whole number of quanta
        if weight == 0:
            assert part == 0
    # Largest remainder: a part rounded up never has a smaller remainder than one rounded down
    # (on a tie, the earlier part is the one rounded up).
    remainders = [(share / quantum) - math.floor(share / quantum) for share in shares]
    up = [Fraction(p) > s for p, s in zip(parts, shares, strict=True)]
    for i in range(len(parts)):
        for j in range(len(parts)):
            if up[i] and not up[j] and remainders[j] > 0:
                assert (remainders[i], -i) > (remainders[j], -j)


@pytest.mark.spec("§9.1 proportional-split")
@given(amounts, weights_lists())
def test_split_writes_exact_parts_with_the_amounts_own_decimals(amount, weights):
    exponent = min(0, amount.as_tuple().exponent)  # never coarser than units: 5E+2 splits as 500
    for part in split(amount, weights):
        if part == part.quantize(Decimal(1).scaleb(exponent), context=Context(prec=100)):
            assert part.as_tuple().exponent == exponent
