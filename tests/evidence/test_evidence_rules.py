"""Economic evidence and the debugger on the core, one test per rule (``observed-accounting/1``).

Every test runs the real services over the in-memory store with a fixed clock. The spec's rule
"failures in evidence never turn into zero" is checked wherever a figure could hide a gap.
"""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.debugger.markdown import render_markdown
from ecp_core.debugger.model import MAX_WINDOW_EVENTS, METHOD_VERSION, DebuggerQuery
from ecp_core.debugger.tally import Granularity
from ecp_core.errors import (
    Conflict,
    EvidenceWindowTooLarge,
    OutcomeDefinitionImmutable,
    ValidationFailed,
)
from ecp_core.evidence.model import (
    MAX_BATCH,
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
)
from ecp_core.system import FixedClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 3, 1, tzinfo=UTC)
NOW = datetime(2026, 3, 10, tzinfo=UTC)
END = datetime(2026, 3, 5, tzinfo=UTC)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
DIGEST = "sha256:" + "0" * 64
MEASURED, ESTIMATED, UNMEASURED = (
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
    CostMeasurement.UNMEASURED,
)


def world(now=NOW):
    clock = FixedClock(now)
    return Ecp.in_memory(clock=clock), clock


def charge(event_id, cost="1", *, run_id="r1", measurement=None, **fields):
    """A charge of ``cost`` (None: unknown) whose charge id is its event id unless given."""
    amount = None if cost is None else Decimal(cost)
    if measurement is None:
        measurement = UNMEASURED if amount is None else MEASURED
    fields.setdefault("charge_id", event_id)
    fields.setdefault("occurred_at", T0)
    fields.setdefault("workflow_version", "1")
    return ExecutionEvent(
        event_id=event_id,
        workflow_id="w",
        run_id=run_id,
        cost_usd=amount,
        cost_measurement=measurement,
        **fields,
    )


def summary(event_id, *, run_id="r1", **fields):
    fields.setdefault("occurred_at", T0)
    return ExecutionEvent(
        event_id=event_id,
        workflow_id="w",
        workflow_version="1",
        run_id=run_id,
        cost_role=CostRole.SUMMARY,
        **fields,
    )


def outcome(event_id, run_id="r1", value=True, *, at=T0, version="1", **fields):
    fields.setdefault("outcome_type", "resolved")
    return OutcomeEvent(
        event_id=event_id,
        workflow_id="w",
        workflow_version=version,
        run_id=run_id,
        value=value,
        asserted_at=at,
        **fields,
    )


def revision(event_id, charge_id, cost, *, at=T0, measurement=None):
    amount = None if cost is None else Decimal(cost)
    if measurement is None:
        measurement = UNMEASURED if amount is None else MEASURED
    return ChargeRevision(
        event_id=event_id,
        charge_id=charge_id,
        revised_at=at,
        cost_usd=amount,
        cost_measurement=measurement,
    )


def define(
    ecp, version="1", kind=PredicateKind.EQUALS, value=True, threshold=None, outcome_type="resolved"
):
    predicate = SuccessPredicate(
        kind=kind, value=value, threshold=None if threshold is None else Decimal(threshold)
    )
    request = OutcomeDefinitionRequest(
        workflow_id="w", workflow_version=version, outcome_type=outcome_type, predicate=predicate
    )
    return ecp.evidence.define_outcome(ADMIN, request)


def query(**fields):
    fields.setdefault("start", T0)
    fields.setdefault("end", END)
    return DebuggerQuery(workflow_id="w", **fields)


def report(ecp, tenant="t", **fields):
    return ecp.debugger.report(tenant, query(**fields))


def wire(ecp, **fields):
    """The report as the JSON a client reads."""
    return unstructure(report(ecp, **fields))


def status_of(ecp, run_id="r1", version="1"):
    """A single run's status read back from the version's figures."""
    rows = {row.workflow_version: row.accounting for row in report(ecp).versions}
    figures = rows[version]
    assert figures.runs == 1, f"expected one run in version {version}"
    return (
        "success"
        if figures.successful_runs
        else "failure"
        if figures.failed_runs
        else "unresolved"
        if figures.incomplete.unresolved_runs
        else "?"
    )


@pytest.mark.spec("§2.9 latest-outcome")
def test_the_latest_non_future_outcome_decides_a_run():
    ecp, clock = world(T0 + timedelta(minutes=90))
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1")])
    ecp.evidence.ingest_outcomes(
        "t",
        [outcome("o1", value=True, at=T0 + timedelta(hours=1)), outcome("o0", value=False, at=T0)],
    )
    assert status_of(ecp) == "success"
    # An assertion dated after the clock is ignored until the clock passes it.
    ecp.evidence.ingest_outcomes("t", [outcome("o2", value=False, at=T0 + timedelta(hours=2))])
    assert status_of(ecp) == "success"
    assert report(ecp).scope.as_of == clock.now()
    clock.advance(30 * 60)  # exactly at asserted_at: not in the future any more
    assert status_of(ecp) == "failure"
    # Assertions of another outcome type never decide.
    ecp.evidence.ingest_outcomes(
        "t", [outcome("o3", value=True, at=T0 + timedelta(hours=2), outcome_type="escalated")]
    )
    assert status_of(ecp) == "failure"


@pytest.mark.spec("§2.9 latest-outcome")
@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_outcomes_asserted_at_the_same_instant_are_ordered_by_event_id(order):
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1")])
    values = {"a": False, "b": True}  # "b" sorts last, so it decides
    for event_id in order:
        ecp.evidence.ingest_outcomes("t", [outcome(event_id, value=values[event_id])])
    assert status_of(ecp) == "success"


@pytest.mark.spec("§2.9 charge-revisions")
def test_the_latest_charge_revision_prices_the_charge():
    ecp, _ = world()
    ecp.evidence.ingest_executions(
        "t", [charge("e1", "1.00", charge_id="c1"), charge("e2", "5", charge_id="c2")]
    )
    ecp.evidence.ingest_revisions(
        "t",
        [
            revision("rv-z", "c1", "2.00", at=T0 + timedelta(hours=1)),
            revision("rv-a", "c1", "3.50", at=T0 + timedelta(hours=2), measurement=ESTIMATED),
        ],
    )
    totals = report(ecp).totals
    # c1 is priced by rv-a (latest revised_at, despite the smaller event id); c2 by itself.
    assert (totals.measured_cost_usd, totals.estimated_cost_usd) == (Decimal(5), Decimal("3.50"))
    # At the same revised_at, the greater event id wins whatever the arrival order.
    ecp.evidence.ingest_revisions(
        "t", [revision("rv-c", "c2", "7", at=T0), revision("rv-b", "c2", "6", at=T0)]
    )
    assert report(ecp).totals.measured_cost_usd == Decimal(7)


@pytest.mark.spec("§2.9 charge-revisions")
def test_a_revision_that_arrives_before_its_charge_applies_once_the_charge_arrives():
    ecp, _ = world()
    ecp.evidence.ingest_revisions("t", [revision("rv1", "c9", "0.25")])
    assert report(ecp).totals.events == 0
    ecp.evidence.ingest_executions("t", [charge("e1", "10", charge_id="c9")])
    totals = report(ecp).totals
    assert (totals.events, totals.known_cost_usd) == (1, Decimal("0.25"))


@pytest.mark.spec("§2.9 charge-revisions", "§7 evidence-never-zero")
def test_a_revision_to_unknown_cost_makes_the_charge_unknown():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", "4"), charge("e2", "1")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    assert report(ecp).totals.cost_per_successful_outcome_usd == Decimal(5)
    ecp.evidence.ingest_revisions("t", [revision("rv1", "e1", None)])
    totals = report(ecp).totals
    assert totals.known_cost_usd == Decimal(1)
    assert totals.incomplete.unknown_cost_events == 1
    assert totals.incomplete.complete is False
    assert totals.cost_per_successful_outcome_usd is None


@pytest.mark.spec("§2.9 repeated-attempt-cost")
def test_repeated_attempt_spend_counts_only_attempts_after_the_first():
    ecp, _ = world()
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("e1", "1", attempt=1),
            charge("e2", "2", attempt=2),
            charge("e3", "4", attempt=3, measurement=ESTIMATED),
            charge("e4", None, attempt=2),  # a repeat of unknown cost: counted, never priced as 0
            summary("s1", attempt=5),  # structural: no money, no repeat spend
        ],
    )
    totals = report(ecp).totals
    assert (totals.repeated_attempt_events, totals.repeated_attempt_usd) == (3, Decimal(6))
    assert totals.known_cost_usd == Decimal(7)


@pytest.mark.spec("§2.9 charge-ownership")
def test_summary_events_carry_no_money_and_are_never_unknown_cost():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t", [charge("e1", "2"), summary("s1"), summary("s2", step_id="plan")]
    )
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    totals = report(ecp).totals
    assert (totals.events, totals.summary_events) == (3, 2)
    assert totals.incomplete.unknown_cost_events == 0
    assert totals.incomplete.complete is True
    assert totals.known_cost_usd == Decimal(2)
    assert totals.cost_per_successful_outcome_usd == Decimal(2)


@pytest.mark.spec("§2.9 cost-measurement", "§7 evidence-never-zero")
def test_unknown_cost_is_incomplete_and_never_zero():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t", [charge("e1", "1.5"), charge("e2", "0"), charge("e3", None)]
    )
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    document = wire(ecp)
    totals = document["totals"]
    assert totals["known_cost_usd"] == "1.5"  # the observed zero is a zero; the unknown is absent
    assert totals["incomplete"]["unknown_cost_events"] == 1
    assert totals["incomplete"]["complete"] is False
    assert totals["cost_per_successful_outcome_usd"] is None
    for row in (
        *document["versions"],
        *document["timeline"],
        *document["cohorts"],
        *document["steps"],
    ):
        assert row["accounting"]["cost_per_successful_outcome_usd"] is None
        assert row["accounting"]["incomplete"]["unknown_cost_events"] == 1
    markdown = render_markdown(report(ecp))
    assert "1 unknown-cost events" in markdown
    assert "| n/a |" in markdown


@pytest.mark.spec("§2.9 cost-measurement")
def test_an_observed_zero_is_a_complete_zero():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", "0")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    totals = wire(ecp)["totals"]
    assert (totals["known_cost_usd"], totals["cost_per_successful_outcome_usd"]) == ("0", "0")
    assert totals["incomplete"]["complete"] is True


@pytest.mark.spec("§7 evidence-never-zero")
def test_events_without_a_run_are_unattributed_and_incomplete():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", "1"), charge("e2", "2", run_id=None)])
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    totals = report(ecp).totals
    assert (totals.events, totals.runs, totals.known_cost_usd) == (2, 1, Decimal(3))
    assert totals.incomplete.unattributed_events == 1
    assert totals.incomplete.unresolved_runs == 0
    assert totals.incomplete.complete is False


@pytest.mark.spec("§7 evidence-never-zero")
def test_a_version_without_outcome_definition_leaves_its_runs_unresolved():
    ecp, _ = world()
    define(ecp, version="1")
    ecp.evidence.ingest_executions(
        "t", [charge("e1", "1", run_id="r1"), charge("e2", "1", run_id="r2", workflow_version="2")]
    )
    ecp.evidence.ingest_outcomes("t", [outcome("o1", "r1"), outcome("o2", "r2", version="2")])
    versions = {row.workflow_version: row for row in report(ecp).versions}
    assert versions["1"].outcome_definition is True
    assert versions["1"].accounting.successful_runs == 1
    assert versions["2"].outcome_definition is False
    assert (versions["2"].accounting.successful_runs, versions["2"].accounting.failed_runs) == (
        0,
        0,
    )
    assert versions["2"].accounting.incomplete.unresolved_runs == 1
    assert versions["2"].accounting.failure_rate is None
    assert "| 2 | missing |" in render_markdown(report(ecp))


@pytest.mark.spec("§2.9 latest-outcome")
def test_a_run_without_a_deciding_outcome_is_unresolved():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", run_id="r1"), charge("e2", run_id="r2")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1", "r1")])
    totals = report(ecp).totals
    assert (totals.runs, totals.successful_runs, totals.incomplete.unresolved_runs) == (2, 1, 1)
    assert totals.failure_rate == Decimal(0)  # failed over resolved runs only


@pytest.mark.spec("§2.9 outcome-definition")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.9, "success"),
        (0.8, "success"),
        (1, "success"),
        (0.5, "failure"),
        (0, "failure"),
        ("0.9", "unresolved"),
        (True, "unresolved"),
        (False, "unresolved"),
    ],
)
def test_a_threshold_judges_numbers_only(value, expected):
    ecp, _ = world()
    define(ecp, kind=PredicateKind.AT_LEAST, value=None, threshold="0.8")
    ecp.evidence.ingest_executions("t", [charge("e1")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1", value=value)])
    assert status_of(ecp) == expected


@pytest.mark.spec("§2.9 outcome-definition")
@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        (PredicateKind.GREATER_THAN, 3, "failure"),
        (PredicateKind.GREATER_THAN, 3.000001, "success"),
        (PredicateKind.AT_MOST, 3, "success"),
        (PredicateKind.LESS_THAN, 3, "failure"),
        (PredicateKind.LESS_THAN, 2.5, "success"),
    ],
)
def test_every_threshold_comparison(kind, value, expected):
    ecp, _ = world()
    define(ecp, kind=kind, value=None, threshold="3")
    ecp.evidence.ingest_executions("t", [charge("e1")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1", value=value)])
    assert status_of(ecp) == expected


@pytest.mark.spec("§2.9 outcome-definition")
@pytest.mark.parametrize(
    ("expected_value", "value", "expected"),
    [
        (1, 1, "success"),
        (1, 1.0, "success"),
        (1, True, "failure"),
        (1, "1", "failure"),
        (True, True, "success"),
        (True, 1, "failure"),
        (False, 0, "failure"),
        ("done", "done", "success"),
        ("done", "Done", "failure"),
        (0.1, 0.1, "success"),
    ],
)
def test_equality_is_type_aware(expected_value, value, expected):
    ecp, _ = world()
    define(ecp, value=expected_value)
    ecp.evidence.ingest_executions("t", [charge("e1")])
    ecp.evidence.ingest_outcomes("t", [outcome("o1", value=value)])
    assert status_of(ecp) == expected


@pytest.mark.spec("§2.9 outcome-definition")
def test_an_outcome_definition_is_immutable_per_workflow_version():
    ecp, clock = world()
    first, created = define(ecp, value=True)
    assert created is True
    assert first.digest.startswith("sha256:")
    assert (first.created_by, first.created_at) == ("admin", NOW)
    clock.advance(60)
    again, created = define(ecp, value=True)
    assert created is False
    assert again == first
    for changed in (
        {"value": False},
        {"value": 1},
        {"outcome_type": "escalated"},
        {"kind": PredicateKind.AT_LEAST, "value": None, "threshold": "1"},
    ):
        with pytest.raises(OutcomeDefinitionImmutable):
            define(ecp, **changed)
    other, created = define(ecp, version="2", value=False)
    assert created is True
    assert other.predicate.value is False
    # Another tenant's version 1 is its own.
    stranger = ActorIdentity(subject="x", auth_method=AuthMethod.BEARER, tenant_id="u")
    request = OutcomeDefinitionRequest(
        workflow_id="w",
        workflow_version="1",
        outcome_type="resolved",
        predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=False),
    )
    assert ecp.evidence.define_outcome(stranger, request)[1] is True


@pytest.mark.spec("§2.9 outcome-definition")
@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"kind": PredicateKind.EQUALS, "value": None}, ("predicate", "value")),
        (
            {"kind": PredicateKind.EQUALS, "value": 1, "threshold": Decimal(1)},
            ("predicate", "threshold"),
        ),
        ({"kind": PredicateKind.AT_LEAST}, ("predicate", "threshold")),
        (
            {"kind": PredicateKind.AT_LEAST, "value": 1, "threshold": Decimal(1)},
            ("predicate", "value"),
        ),
    ],
)
def test_a_predicate_names_a_value_or_a_threshold(fields, loc):
    ecp, _ = world()
    request = OutcomeDefinitionRequest(
        workflow_id="w",
        workflow_version="1",
        outcome_type="resolved",
        predicate=SuccessPredicate(**fields),
    )
    with pytest.raises(ValidationFailed) as raised:
        ecp.evidence.define_outcome(ADMIN, request)
    assert [error.loc for error in raised.value.errors] == [loc]
    assert define(ecp)[1] is True  # nothing was stored by the refusal


def inventory(event_id, *, start=T0, end=END, windows=("sw1",)):
    return SourceInventory(
        event_id=event_id,
        workflow_id="w",
        workflow_version="1",
        capture_start=start,
        capture_end=end,
        terminal_run_ids=("r1",),
        windows=tuple(
            SourceWindow(source_window_id=w, expected_events=1, event_ids_digest=DIGEST)
            for w in windows
        ),
    )


BAD_BATCHES = {
    "null cost must be unmeasured": (
        "executions",
        charge("bad", None, measurement=MEASURED),
        ("events", 1, "cost_usd"),
    ),
    "unmeasured must have null cost": (
        "executions",
        charge("bad", "1", measurement=UNMEASURED),
        ("events", 1, "cost_measurement"),
    ),
    "summary with cost": (
        "executions",
        summary("bad", cost_usd=Decimal(1), cost_measurement=MEASURED),
        ("events", 1, "cost_usd"),
    ),
    "summary with charge id": (
        "executions",
        summary("bad", charge_id="c"),
        ("events", 1, "charge_id"),
    ),
    "charge without charge id": (
        "executions",
        charge("bad", "1", charge_id=None),
        ("events", 1, "charge_id"),
    ),
    "revision with null cost must be unmeasured": (
        "revisions",
        revision("bad", "c", None, measurement=ESTIMATED),
        ("events", 1, "cost_usd"),
    ),
    "unmeasured revision must have null cost": (
        "revisions",
        revision("bad", "c", "1", measurement=UNMEASURED),
        ("events", 1, "cost_measurement"),
    ),
    "capture end before start": (
        "inventories",
        inventory("bad", start=END, end=T0),
        ("events", 1, "capture_end"),
    ),
    "repeated source window": (
        "inventories",
        inventory("bad", windows=("sw1", "sw2", "sw1")),
        ("events", 1, "windows"),
    ),
}
GOOD = {
    "executions": charge("good", "1"),
    "revisions": revision("good", "c", "1"),
    "inventories": inventory("good"),
}


@pytest.mark.spec("C6 evidence-ingestion")
@pytest.mark.parametrize("case", sorted(BAD_BATCHES))
def test_cross_field_rules_reject_the_whole_batch(case):
    kind, bad, loc = BAD_BATCHES[case]
    ecp, _ = world()
    ingest = getattr(ecp.evidence, f"ingest_{kind}")
    with pytest.raises(ValidationFailed) as raised:
        ingest("t", [GOOD[kind], bad])
    assert [error.loc for error in raised.value.errors] == [loc]
    # Nothing of the rejected batch was stored: the good event is new.
    assert ingest("t", [GOOD[kind]]).stored == 1


@pytest.mark.spec("C6 evidence-ingestion")
def test_a_summary_may_state_its_measurement_and_a_valid_inventory_is_stored():
    ecp, _ = world()
    result = ecp.evidence.ingest_executions("t", [summary("s1", cost_measurement=MEASURED)])
    assert (result.received, result.stored, result.replayed) == (1, 1, 0)
    assert ecp.evidence.ingest_inventories("t", [inventory("i1", start=T0, end=T0)]).stored == 1


@pytest.mark.spec("C1 field-locations")
def test_every_failing_event_is_named():
    ecp, _ = world()
    with pytest.raises(ValidationFailed) as raised:
        ecp.evidence.ingest_executions(
            "t",
            [
                charge("a", None, measurement=ESTIMATED),
                charge("b"),
                summary("c", charge_id="x", cost_usd=Decimal(1)),
            ],
        )
    assert sorted(error.loc for error in raised.value.errors) == [
        ("events", 0, "cost_usd"),
        ("events", 2, "charge_id"),
        ("events", 2, "cost_usd"),
    ]


@pytest.mark.spec("C6 evidence-ingestion")
def test_an_exact_replay_is_idempotent_and_a_changed_one_conflicts_storing_nothing():
    ecp, _ = world()
    first = ecp.evidence.ingest_executions("t", [charge("e1", "1"), charge("e2", "2")])
    assert (first.received, first.stored, first.replayed) == (2, 2, 0)
    replay = ecp.evidence.ingest_executions("t", [charge("e2", "2"), charge("e1", "1")])
    assert (replay.received, replay.stored, replay.replayed) == (2, 0, 2)
    with pytest.raises(Conflict):
        ecp.evidence.ingest_executions("t", [charge("e3", "3"), charge("e1", "1.01")])
    assert report(ecp).totals.known_cost_usd == Decimal(3)
    assert ecp.evidence.ingest_executions("t", [charge("e3", "3")]).stored == 1
    # The same rule holds for every kind of evidence.
    ecp.evidence.ingest_outcomes("t", [outcome("o1")])
    with pytest.raises(Conflict):
        ecp.evidence.ingest_outcomes("t", [outcome("o2"), outcome("o1", value=False)])
    assert ecp.evidence.ingest_outcomes("t", [outcome("o2")]).stored == 1
    ecp.evidence.ingest_revisions("t", [revision("v1", "e1", "1")])
    with pytest.raises(Conflict):
        ecp.evidence.ingest_revisions("t", [revision("v1", "e1", "2")])
    ecp.evidence.ingest_inventories("t", [inventory("i1")])
    with pytest.raises(Conflict):
        ecp.evidence.ingest_inventories("t", [inventory("i1", windows=("sw2",))])
    # Event ids are per tenant: another tenant may use the same id with other content.
    assert ecp.evidence.ingest_executions("u", [charge("e1", "9")]).stored == 1


@pytest.mark.spec("§2.9 charge-ownership")
def test_a_charge_id_belongs_to_one_event_of_the_tenant():
    ecp, _ = world()
    ecp.evidence.ingest_executions("t", [charge("e1", "1", charge_id="c1")])
    with pytest.raises(Conflict):
        ecp.evidence.ingest_executions("t", [charge("e2", "1", charge_id="c1")])
    with pytest.raises(Conflict):
        ecp.evidence.ingest_executions(
            "t", [charge("e3", "1", charge_id="c3"), charge("e4", "1", charge_id="c3")]
        )
    assert report(ecp).totals.events == 1
    assert ecp.evidence.ingest_executions("t", [charge("e3", "1", charge_id="c3")]).stored == 1
    assert ecp.evidence.ingest_executions("u", [charge("e2", "1", charge_id="c1")]).stored == 1


@pytest.mark.spec("C1 wire-values")
def test_exponent_notation_is_exact_money_written_plainly():
    ecp, _ = world()
    wire_events = [
        {
            "event_id": f"e{i}",
            "workflow_id": "w",
            "workflow_version": "1",
            "run_id": "r1",
            "occurred_at": "2026-03-01T00:00:00Z",
            "charge_id": f"e{i}",
            "cost_usd": "1E-8",
            "cost_measurement": "measured",
        }
        for i in range(3)
    ]
    events = [structure(event, ExecutionEvent) for event in wire_events]
    assert events[0].cost_usd == Decimal("0.00000001")
    ecp.evidence.ingest_executions("t", events)
    totals = wire(ecp)["totals"]
    assert totals["measured_cost_usd"] == totals["known_cost_usd"] == "0.00000003"
    assert "E" not in json.dumps(wire(ecp))
    assert unstructure(events[0])["cost_usd"] == "0.00000001"
    # The plain spelling of the same amount is an exact replay.
    plain = structure({**wire_events[0], "cost_usd": "0.00000001"}, ExecutionEvent)
    assert ecp.evidence.ingest_executions("t", [plain]).replayed == 1


@pytest.mark.spec("C1 wire-values")
def test_sums_are_exact_and_ratios_are_rounded_half_even_to_twelve_places():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("e1", "0.1", run_id="r1"),
            charge("e2", "0.2", run_id="r2"),
            charge("e3", "0.000000000000000001", run_id="r3"),
        ],
    )
    ecp.evidence.ingest_outcomes(
        "t", [outcome("o1", "r1"), outcome("o2", "r2"), outcome("o3", "r3", value=False)]
    )
    totals = wire(ecp)["totals"]
    assert totals["known_cost_usd"] == "0.300000000000000001"
    assert totals["cost_per_successful_outcome_usd"] == "0.15"
    assert totals["failure_rate"] == "0.333333333333"
    assert totals["failure_tax_usd"] == "0.000000000000000001"


@pytest.mark.spec("§4.4 debugger-timeline")
def test_failure_tax_is_the_known_cost_of_failed_runs():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("e1", "1", run_id="ok"),
            charge("e2", "2", run_id="bad", step_id="call"),
            charge("e3", "3", run_id="bad", step_id="retry", attempt=2),
            charge("e4", None, run_id="bad"),
            charge("e5", "4", run_id="open"),
            summary("s1", run_id="bad"),
        ],
    )
    ecp.evidence.ingest_outcomes("t", [outcome("o1", "ok"), outcome("o2", "bad", value=False)])
    result = ecp.debugger.breakage("t", query())
    assert result.method_version == METHOD_VERSION
    assert result.totals.failure_tax_usd == Decimal(5)
    assert (result.totals.successful_runs, result.totals.failed_runs) == (1, 1)
    assert result.totals.failure_rate == Decimal("0.5")
    # Steps come most-exposed first: failure tax, then repeated-attempt spend.
    assert [(row.step_id, row.accounting.failure_tax_usd) for row in result.steps] == [
        ("retry", Decimal(3)),
        ("call", Decimal(2)),
        (None, Decimal(0)),
    ]
    assert result.steps[0].accounting.repeated_attempt_usd == Decimal(3)


@pytest.mark.spec("§2.9 outcome-measurement")
def test_inferred_and_provisional_outcomes_are_shown_but_keep_a_group_complete():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", run_id="r1"), charge("e2", run_id="r2")])
    ecp.evidence.ingest_outcomes(
        "t",
        [
            outcome("o1", "r1", outcome_measurement=OutcomeMeasurement.INFERRED),
            outcome("o2", "r2", maturity=OutcomeMaturity.PROVISIONAL),
        ],
    )
    gaps = report(ecp).totals.incomplete
    assert (gaps.inferred_outcome_runs, gaps.provisional_outcome_runs, gaps.complete) == (
        1,
        1,
        True,
    )


@pytest.mark.spec("C6 debugger-queries")
def test_the_window_is_half_open():
    ecp, _ = world()
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("at-start", "1", occurred_at=T0),
            charge("before-start", "10", occurred_at=T0 - timedelta(microseconds=1)),
            charge("just-before-end", "100", occurred_at=END - timedelta(microseconds=1)),
            charge("at-end", "1000", occurred_at=END),
        ],
    )
    totals = report(ecp).totals
    assert (totals.events, totals.known_cost_usd) == (2, Decimal(101))
    shifted = report(ecp, start=END, end=END + timedelta(days=1)).totals
    assert (shifted.events, shifted.known_cost_usd) == (1, Decimal(1000))


@pytest.mark.spec("C6 debugger-queries")
def test_an_empty_or_reversed_window_is_refused():
    ecp, _ = world()
    for end in (T0, T0 - timedelta(seconds=1)):
        with pytest.raises(ValidationFailed) as raised:
            ecp.debugger.timeline("t", query(end=end))
        assert [error.loc for error in raised.value.errors] == [("end",)]


@pytest.mark.spec("C6 debugger-queries")
def test_an_empty_window_answers_zero_events_and_is_complete():
    ecp, _ = world()
    result = report(ecp)
    assert (result.totals.events, result.versions, result.timeline) == (0, (), ())
    assert result.totals.incomplete.complete is True


@pytest.mark.spec("§4.4 debugger-timeline")
@pytest.mark.parametrize(
    ("granularity", "expected"),
    [
        (
            Granularity.HOUR,
            [
                ("00:00", "01:00", "1", 1),
                ("01:00", "02:00", "1", 2),
                ("01:00", "02:00", "2", 1),
                ("d2 00:00", "d2 01:00", "1", 1),
            ],
        ),
        (
            Granularity.DAY,
            [
                ("00:00", "d2 00:00", "1", 3),
                ("00:00", "d2 00:00", "2", 1),
                ("d2 00:00", "d3 00:00", "1", 1),
            ],
        ),
    ],
)
def test_timeline_windows_by_hour_and_day(granularity, expected):
    def at(text):
        day, _, clock = text.rpartition(" ")
        hours, minutes = map(int, clock.split(":"))
        days = int(day[1:]) - 1 if day else 0
        return T0 + timedelta(days=days, hours=hours, minutes=minutes)

    ecp, _ = world()
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("e1", "1", occurred_at=at("00:30")),
            charge("e2", "2", occurred_at=at("01:00")),
            charge("e3", "4", occurred_at=at("01:59")),
            charge("e4", "8", occurred_at=at("01:10"), workflow_version="2"),
            charge("e5", "16", occurred_at=at("d2 00:05")),
        ],
    )
    result = ecp.debugger.timeline("t", query(granularity=granularity))
    assert (result.method_version, result.granularity) == (METHOD_VERSION, granularity)
    rows = [
        (row.window_start, row.window_end, row.workflow_version, row.accounting.events)
        for row in result.rows
    ]
    assert rows == [
        (at(start), at(end), version, events) for start, end, version, events in expected
    ]
    assert result.totals.known_cost_usd == Decimal(31)


@pytest.mark.spec("C6 debugger-queries")
def test_a_version_filter_narrows_every_figure():
    ecp, _ = world()
    ecp.evidence.ingest_executions(
        "t", [charge("e1", "1"), charge("e2", "2", workflow_version="2")]
    )
    result = ecp.debugger.timeline("t", query(workflow_version="2"))
    assert [row.workflow_version for row in result.versions] == ["2"]
    assert result.totals.known_cost_usd == Decimal(2)
    assert result.scope.workflow_version == "2"


@pytest.mark.spec("§4.4 debugger-cohorts")
def test_cohorts_group_by_subject_or_by_a_typed_dimension():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("e1", "1", run_id="r1", subject_id="acct-1", dimensions={"tier": True}),
            charge("e2", "2", run_id="r2", subject_id="acct-1", dimensions={"tier": 1}),
            charge("e3", "4", run_id="r3", subject_id="acct-2", dimensions={"tier": 1.0}),
            charge("e4", "8", run_id="r4", dimensions={"tier": "1"}),
            charge("e5", "16", run_id="r5"),
        ],
    )
    ecp.evidence.ingest_outcomes(
        "t", [outcome("o1", "r1"), outcome("o2", "r2", value=False), outcome("o3", "r3")]
    )
    by_subject = ecp.debugger.cohorts("t", query())
    assert by_subject.cohort == "subject_id"
    assert [(row.cohort, row.accounting.known_cost_usd) for row in by_subject.rows] == [
        (None, Decimal(24)),
        ("acct-1", Decimal(3)),
        ("acct-2", Decimal(4)),
    ]
    acct_1 = by_subject.rows[1].accounting
    assert (acct_1.successful_runs, acct_1.failed_runs, acct_1.failure_rate) == (
        1,
        1,
        Decimal("0.5"),
    )
    assert acct_1.cost_per_successful_outcome_usd == Decimal(3)
    by_tier = ecp.debugger.cohorts("t", query(cohort="dimension:tier"))
    assert by_tier.cohort == "dimension:tier"
    # true, 1 (with 1.0) and "1" are three cohorts; a missing key is its own (null) cohort.
    cohorts = [(row.cohort, row.accounting.events) for row in by_tier.rows]
    assert cohorts == [(None, 1), (True, 1), (1, 2), ("1", 1)]
    assert type(cohorts[1][0]) is bool
    assert type(cohorts[2][0]) is int


@pytest.mark.spec("§9 method-versions")
def test_every_answer_names_its_method_version():
    ecp, _ = world()
    ecp.evidence.ingest_executions("t", [charge("e1", "1")])
    answers = [
        ecp.debugger.timeline("t", query()),
        ecp.debugger.cohorts("t", query()),
        ecp.debugger.breakage("t", query()),
        report(ecp),
    ]
    assert {unstructure(answer)["method_version"] for answer in answers} == {METHOD_VERSION}
    markdown = render_markdown(report(ecp))
    assert f"method_version: `{METHOD_VERSION}`" in markdown
    assert "(half-open)" in markdown


@pytest.mark.spec("§2.9 evidence-tenant-boundary")
def test_a_tenant_sees_only_its_own_evidence():
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions("t", [charge("e1", "1")])
    ecp.evidence.ingest_executions("u", [charge("e1", "5"), charge("e2", "7", run_id="r2")])
    ecp.evidence.ingest_outcomes("u", [outcome("o1", "r1")])
    mine = report(ecp).totals
    assert (mine.events, mine.known_cost_usd, mine.successful_runs) == (1, Decimal(1), 0)
    theirs = report(ecp, tenant="u")
    assert (theirs.totals.events, theirs.totals.known_cost_usd) == (2, Decimal(12))
    assert theirs.versions[0].outcome_definition is False  # t's definition is not u's


def _fill(ecp, count, *, version="1"):
    """Ingest ``count`` events in full batches, each on its own run."""
    for first in range(0, count, MAX_BATCH):
        ecp.evidence.ingest_executions(
            "t",
            [
                charge(
                    f"v{version}-{n}",
                    "0.001",
                    run_id=f"r{n}",
                    workflow_version=version,
                    occurred_at=T0 + timedelta(seconds=n),
                )
                for n in range(first, min(first + MAX_BATCH, count))
            ],
        )


@pytest.mark.spec("§7 debugger-event-limit")
def test_a_window_of_more_than_50000_execution_events_is_refused_never_truncated():
    ecp, _ = world()
    _fill(ecp, MAX_WINDOW_EVENTS)
    assert MAX_WINDOW_EVENTS == 50_000
    full = ecp.debugger.timeline("t", query())
    assert (full.totals.events, full.totals.known_cost_usd) == (50_000, Decimal("50.000"))
    # Outside the window (at its exclusive end) and in another workflow nothing counts.
    ecp.evidence.ingest_executions(
        "t",
        [
            charge("late", "1", occurred_at=END),
            ExecutionEvent(
                event_id="other",
                workflow_id="w2",
                workflow_version="1",
                occurred_at=T0,
                cost_role=CostRole.SUMMARY,
            ),
        ],
    )
    assert ecp.debugger.breakage("t", query()).totals.events == 50_000
    ecp.evidence.ingest_executions("t", [charge("one-more", "1", workflow_version="2")])
    for read in (
        ecp.debugger.timeline,
        ecp.debugger.cohorts,
        ecp.debugger.breakage,
        ecp.debugger.report,
    ):
        with pytest.raises(EvidenceWindowTooLarge) as raised:
            read("t", query())
        assert raised.value.code == "evidence_window_too_large"
    # Narrowing the window (here by version) answers again.
    assert ecp.debugger.timeline("t", query(workflow_version="2")).totals.events == 1
    assert ecp.debugger.timeline("t", query(workflow_version="1")).totals.events == 50_000
