"""Provider-bill reconciliation on the core, one test per rule (``measured-cost-proportional/1``).

Statements are built from JSON-shaped data with the wire converter, so the wire's validation is
part of every import rule tested here. Reports run the real services over the in-memory store
with a fixed clock; the figures are small and computed by hand.
"""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.errors import Conflict, EvidenceWindowTooLarge, NotFound, ValidationFailed
from ecp_core.evidence.model import (
    MAX_BATCH,
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.reconciliation.markdown import render_markdown
from ecp_core.reconciliation.model import (
    LEGACY_METHOD_VERSION,
    METHOD_VERSION,
    ProviderStatement,
    report_method_version,
)
from ecp_core.reconciliation.rules import split, statement_digest
from ecp_core.reconciliation.service import MAX_RECONCILIATION_EVENTS
from ecp_core.system import FixedClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, tzinfo=UTC)
END = T0 + timedelta(days=1)
NOW = datetime(2026, 11, 5, tzinfo=UTC)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
MEASURED, ESTIMATED, UNMEASURED = (
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
    CostMeasurement.UNMEASURED,
)


def hour(hours=0.0):
    return T0 + timedelta(hours=hours)


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def world(now=NOW):
    clock = FixedClock(now)
    return Ecp.in_memory(clock=clock), clock


def bucket(bucket_id="b0", amount="1.00", start=T0, end=END, **fields):
    """A bucket as JSON; ``start``/``end`` are datetimes or already-spelled strings."""
    return {
        "bucket_id": bucket_id,
        "period_start": start if isinstance(start, str) else iso(start),
        "period_end": end if isinstance(end, str) else iso(end),
        "amount_usd": amount,
        **fields,
    }


def statement(*buckets, statement_id="s1", total=None, **fields):
    """A statement as JSON; ``total`` defaults to the exact sum of the bucket amounts."""
    buckets = buckets or (bucket(),)
    if total is None:
        total = str(sum((Decimal(b["amount_usd"]) for b in buckets), Decimal(0)))
    data = {
        "statement_id": statement_id,
        "provider": "openai",
        "period_start": iso(T0),
        "period_end": iso(END),
        "currency": "USD",
        "billed_total_usd": total,
        "source_kind": "manual",
        "buckets": list(buckets),
    }
    data.update(fields)
    return data


def imported(ecp, data, actor=ADMIN):
    """Import JSON-shaped statement data through the wire and the service."""
    return ecp.reconciliation.import_statement(actor, structure(data, ProviderStatement))


def charge(
    event_id,
    cost="1",
    *,
    at=T0,
    run_id="r1",
    workflow_id="w",
    version="v1",
    measurement=None,
    provider="openai",
    **metadata,
):
    amount = None if cost is None else Decimal(cost)
    if measurement is None:
        measurement = UNMEASURED if amount is None else MEASURED
    meta = {"provider": provider, **metadata} if provider is not None else dict(metadata)
    return ExecutionEvent(
        event_id=event_id,
        workflow_id=workflow_id,
        workflow_version=version,
        run_id=run_id,
        occurred_at=at,
        cost_usd=amount,
        cost_measurement=measurement,
        charge_id=event_id,
        metadata=meta,
    )


def outcome(
    event_id, run_id, value=True, *, at=T0, workflow_id="w", version="v1", outcome_type="done"
):
    return OutcomeEvent(
        event_id=event_id,
        workflow_id=workflow_id,
        workflow_version=version,
        run_id=run_id,
        outcome_type=outcome_type,
        asserted_at=at,
        value=value,
    )


def define(ecp, workflow_id="w", version="v1"):
    request = OutcomeDefinitionRequest(
        workflow_id=workflow_id,
        workflow_version=version,
        outcome_type="done",
        predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
    )
    ecp.evidence.define_outcome(ADMIN, request)


def reconcile(ecp, data, events=(), outcomes=()):
    """Ingest the evidence, import the statement and answer its report."""
    if events:
        ecp.evidence.ingest_executions("t", list(events))
    if outcomes:
        ecp.evidence.ingest_outcomes("t", list(outcomes))
    imported(ecp, data)
    return ecp.reconciliation.report("t", "openai", data["statement_id"])


def by_id(report):
    return {allocation.bucket_id: allocation for allocation in report.allocations}


def groups(allocation):
    """A bucket's groups as comparable tuples of text (the wire spelling of each amount)."""
    return [
        (
            g.workflow_id,
            g.workflow_version,
            str(g.outcome_status),
            str(g.billed_usd),
            str(g.telemetry_usd),
        )
        for g in allocation.groups
    ]


def totals(report):
    return {name: str(value) for name, value in unstructure(report.totals).items()}


# --- import rules -------------------------------------------------------------------------------

REJECTIONS = {
    "statement_id of 193 characters": (statement(statement_id="a" * 193), ("statement_id",)),
    "statement_id with a leading dash": (statement(statement_id="-s1"), ("statement_id",)),
    "statement_id with a space": (statement(statement_id="s 1"), ("statement_id",)),
    "empty statement_id": (statement(statement_id=""), ("statement_id",)),
    "currency EUR": (statement(currency="EUR"), ("currency",)),
    "currency spelled usd": (statement(currency="usd"), ("currency",)),
    "zero billed total": (statement(bucket(amount="1.00"), total="0"), ("billed_total_usd",)),
    "negative billed total": (
        statement(bucket(amount="1.00"), total="-1.00"),
        ("billed_total_usd",),
    ),
    "zero bucket amount": (
        statement(bucket("b0", "0", model="m1"), bucket("b1", "1.00", model="m2"), total="1.00"),
        ("buckets", 0, "amount_usd"),
    ),
    "negative bucket amount": (
        statement(
            bucket("b0", "-0.50", model="m1"), bucket("b1", "1.50", model="m2"), total="1.00"
        ),
        ("buckets", 0, "amount_usd"),
    ),
    "negative zero bucket amount": (
        statement(bucket("b0", "-0", model="m1"), bucket("b1", "1.00", model="m2"), total="1.00"),
        ("buckets", 0, "amount_usd"),
    ),
    "amount as a JSON number": (
        statement(bucket(amount=1.0), total="1.0"),
        ("buckets", 0, "amount_usd"),
    ),
    "amount finer than 1E-18": (
        statement(bucket(amount="1E-19"), total="1.00"),
        ("buckets", 0, "amount_usd"),
    ),
    "duplicate bucket_id": (
        statement(
            bucket("b0", "0.50", provider_dimensions={"project_id": "p1"}),
            bucket("b0", "0.50", provider_dimensions={"project_id": "p2"}),
        ),
        ("buckets", 1, "bucket_id"),
    ),
    "bucket ending where it starts": (
        statement(bucket(start=hour(1), end=hour(1))),
        ("buckets", 0, "period_end"),
    ),
    "bucket ending before it starts": (
        statement(bucket(start=hour(2), end=hour(1))),
        ("buckets", 0, "period_end"),
    ),
    "bucket sum above the total by 1E-18": (
        statement(
            bucket("b0", "0.50", model="m1"),
            bucket("b1", "0.50", model="m2"),
            total="1.000000000000000001",
        ),
        ("billed_total_usd",),
    ),
    "bucket sum below the total by 1E-18": (
        statement(
            bucket("b0", "0.50", model="m1"),
            bucket("b1", "0.50", model="m2"),
            total="0.999999999999999999",
        ),
        ("billed_total_usd",),
    ),
    "dimension api_key": (
        statement(bucket(provider_dimensions={"api_key": "sk-1"})),
        ("buckets", 0, "provider_dimensions"),
    ),
    "dimension customer_id": (
        statement(bucket(provider_dimensions={"project_id": "p1", "customer_id": "c1"})),
        ("buckets", 0, "provider_dimensions"),
    ),
    "dimension prompt": (
        statement(bucket(provider_dimensions={"prompt": "hello"})),
        ("buckets", 0, "provider_dimensions"),
    ),
    "dimension value with whitespace": (
        statement(bucket(provider_dimensions={"project_id": "p 1"})),
        ("buckets", 0, "provider_dimensions"),
    ),
    "unknown statement property": (statement(invoice_number="INV-1"), ("invoice_number",)),
    "unknown bucket property": (statement(bucket(note="x")), ("buckets", 0, "note")),
    "no buckets": (statement(total="1.00") | {"buckets": []}, ("buckets",)),
    "upper-case provider": (statement(provider="OpenAI"), ("provider",)),
    "unknown source_kind": (statement(source_kind="guess"), ("source_kind",)),
    "time without an offset": (statement(period_start="2026-11-01T00:00:00"), ("period_start",)),
}


@pytest.mark.spec("§7 statement-validation")
@pytest.mark.parametrize(("data", "loc"), list(REJECTIONS.values()), ids=list(REJECTIONS))
def test_import_refuses_each_broken_rule_by_field_and_stores_nothing(data, loc):
    ecp, _ = world()
    with pytest.raises(ValidationFailed) as refused:
        imported(ecp, data)
    assert [error.loc for error in refused.value.errors] == [loc]
    assert refused.value.code == "validation_failed"
    # Nothing was stored: a valid statement under the same id is still new.
    _, created = imported(ecp, statement())
    assert created is True


@pytest.mark.spec("§7 statement-validation", "§2.9 provider-bucket")
@pytest.mark.parametrize("where", ["before the start", "after the end"])
def test_a_bucket_outside_the_statement_period_is_refused(where):
    ecp, _ = world()
    if where == "before the start":
        outside = bucket(start=T0 - timedelta(seconds=1), end=hour(1))
    else:
        outside = bucket(start=hour(23), end=END + timedelta(microseconds=1))
    with pytest.raises(ValidationFailed) as refused:
        imported(ecp, statement(outside))
    [error] = refused.value.errors
    # The bucket is named at the end that lies outside.
    field = "period_start" if where == "before the start" else "period_end"
    assert error.loc == ("buckets", 0, field)
    assert "the statement period" in error.msg
    _, created = imported(ecp, statement())
    assert created is True


@pytest.mark.spec("§7 statement-validation", "C1 field-locations")
def test_every_broken_rule_is_reported_at_once():
    ecp, _ = world()
    data = statement(
        bucket("b0", "0.50", start=T0 - timedelta(hours=1), end=hour(1)),
        bucket("b0", "0.50", start=hour(2), end=hour(2)),
        total="2.00",
    )
    with pytest.raises(ValidationFailed) as refused:
        imported(ecp, data)
    assert sorted(str(error.loc) for error in refused.value.errors) == sorted(
        str(loc)
        for loc in [
            ("buckets", 0, "period_start"),
            ("buckets", 1, "bucket_id"),
            ("buckets", 1, "period_end"),
            ("billed_total_usd",),
        ]
    )


@pytest.mark.spec("§2.9 provider-statement")
def test_a_statement_period_must_not_be_empty():
    ecp, _ = world()
    with pytest.raises(ValidationFailed) as refused:
        imported(ecp, statement(bucket(start=T0, end=hour(1)), period_end=iso(T0)))
    assert ("period_end",) in [error.loc for error in refused.value.errors]
    _, created = imported(ecp, statement())
    assert created is True


@pytest.mark.spec("§2.9 provider-statement")
@pytest.mark.parametrize("statement_id", ["a" * 192, "9", "a.b_c:d-e", "openai-2026-11"])
def test_statement_ids_up_to_192_characters_of_the_allowed_alphabet_are_accepted(statement_id):
    ecp, _ = world()
    stored, created = imported(ecp, statement(statement_id=statement_id))
    assert (created, stored.statement.statement_id) == (True, statement_id)


@pytest.mark.spec("§2.9 provider-bucket")
def test_allowed_scope_identifiers_and_a_bucket_filling_the_whole_period_are_accepted():
    ecp, _ = world()
    dims = {
        "project_id": "p1",
        "workspace_id": "w1",
        "organization_id": "o1",
        "region": "us-east-1",
    }
    stored, created = imported(ecp, statement(bucket(provider_dimensions=dims, model="gpt-x")))
    assert created is True
    assert stored.statement.buckets[0].provider_dimensions == dims


@pytest.mark.spec("§2.9 statement-digest")
def test_import_replay_conflict_and_identity():
    ecp, clock = world()
    data = statement(
        bucket("b0", "0.60", provider_dimensions={"project_id": "p0"}),
        bucket("b1", "0.40", provider_dimensions={"project_id": "p1"}),
    )
    stored, created = imported(ecp, data)
    assert created is True
    assert stored.digest.startswith("sha256:") and len(stored.digest) == 71
    assert (stored.imported_at, stored.imported_by, stored.tenant_id) == (NOW, "admin", "t")
    clock.advance(60)
    again, created = imported(ecp, data)
    assert created is False
    assert (again.digest, again.imported_at) == (stored.digest, NOW)
    # Other content under the same (tenant, provider, statement_id) is a conflict...
    changed = statement(
        bucket("b0", "0.61", provider_dimensions={"project_id": "p0"}),
        bucket("b1", "0.39", provider_dimensions={"project_id": "p1"}),
    )
    with pytest.raises(Conflict) as conflict:
        imported(ecp, changed)
    assert conflict.value.code == "conflict"
    with pytest.raises(Conflict):
        imported(ecp, statement(bucket("b0", "1.00"), bucket("b1", "0.00000001", model="m")))
    # ...and leaves the stored statement as it was.
    assert imported(ecp, data)[0].digest == stored.digest
    # The identity includes the tenant and the provider.
    other_tenant = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="u")
    assert imported(ecp, changed, other_tenant)[1] is True
    assert imported(ecp, changed | {"provider": "anthropic"})[1] is True


@pytest.mark.spec("§9.1 statement-normalized")
def test_the_digest_ignores_bucket_order_and_time_zone_spelling():
    ecp, _ = world()
    data = statement(
        bucket("b0", "0.60", start=T0, end=hour(12), provider_dimensions={"project_id": "p0"}),
        bucket("b1", "0.40", start=hour(12), end=END, model="m"),
    )
    respelled = statement(
        bucket(
            "b1",
            "0.40",
            start="2026-11-01T14:00:00+02:00",
            end="2026-11-02T02:00:00+02:00",
            model="m",
        ),
        bucket(
            "b0",
            "0.60",
            start="2026-10-31T19:00:00-05:00",
            end="2026-11-01T12:00:00.000000Z",
            provider_dimensions={"project_id": "p0"},
        ),
        period_start="2026-11-01T02:00:00+02:00",
        period_end="2026-11-02T00:00:00+00:00",
    )
    digest = statement_digest(structure(data, ProviderStatement))
    assert statement_digest(structure(respelled, ProviderStatement)) == digest
    stored, created = imported(ecp, data)
    assert (created, stored.digest) == (True, digest)
    replay, created = imported(ecp, respelled)
    assert (created, replay.digest) == (False, digest)
    # The stored statement is the normalized one: buckets in id order, times in UTC.
    assert [b.bucket_id for b in replay.statement.buckets] == ["b0", "b1"]
    assert replay.statement.period_start == T0 and replay.statement.period_start.tzinfo is UTC
    # A real change of one instant changes the digest.
    moved = statement(
        bucket("b0", "0.60", start=T0, end=hour(11), provider_dimensions={"project_id": "p0"}),
        bucket("b1", "0.40", start=hour(12), end=END, model="m"),
    )
    assert statement_digest(structure(moved, ProviderStatement)) != digest


# --- matching -----------------------------------------------------------------------------------


@pytest.mark.spec("§9.1 bucket-matching")
def test_matching_is_half_open_in_time():
    ecp, _ = world()
    data = statement(bucket("b0", "3.00", start=hour(1), end=hour(2)), total="3.00")
    events = [
        charge("before", "8", at=hour(1) - timedelta(microseconds=1)),
        charge("first", "1", at=hour(1)),
        charge("last", "2", at=hour(2) - timedelta(microseconds=1)),
        charge("at-end", "4", at=hour(2)),
        charge("at-statement-end", "16", at=END),
    ]
    report = reconcile(ecp, data, events)
    allocation = by_id(report)["b0"]
    assert (allocation.matched.measured_events, allocation.matched.measured_usd) == (2, Decimal(3))
    assert groups(allocation) == [("w", "v1", "unresolved", "3.00", "3")]
    # The statement's own period is half-open too: the event at its end is not telemetry.
    assert totals(report)["telemetry_measured_usd"] == "15"
    assert totals(report)["unbilled_telemetry_usd"] == "12"


@pytest.mark.spec("§9.1 bucket-matching")
def test_a_bucket_model_narrows_the_match():
    ecp, _ = world()
    events = [charge("m1", "1", model="m1"), charge("m2", "2", model="m2"), charge("none", "4")]
    narrow = reconcile(
        ecp, statement(bucket(amount="1", model="m1"), statement_id="narrow"), events
    )
    assert by_id(narrow)["b0"].matched.measured_usd == Decimal(1)
    broad = reconcile(ecp, statement(bucket(amount="7"), statement_id="broad"))
    assert by_id(broad)["b0"].matched.measured_usd == Decimal(7)
    assert (
        broad.closure_state == "outcomes_unresolved"
    )  # every dollar went to runs without outcomes


@pytest.mark.spec("§9.1 bucket-matching")
def test_provider_dimensions_match_exactly_on_the_keys_the_bucket_names():
    ecp, _ = world()
    events = [
        charge("p1", "1", project_id="p1"),
        charge("p2", "2", project_id="p2"),
        charge("none", "4"),
        charge("p1-w1", "8", project_id="p1", workspace_id="w1"),
        charge("p1-number", "16", project_id=1),
        charge("P1", "32", project_id="P1"),
    ]
    one = reconcile(
        ecp, statement(bucket(provider_dimensions={"project_id": "p1"}), statement_id="one"), events
    )
    assert by_id(one)["b0"].matched.measured_usd == Decimal(9)
    both = reconcile(
        ecp,
        statement(
            bucket(provider_dimensions={"project_id": "p1", "workspace_id": "w1"}),
            statement_id="both",
        ),
    )
    assert by_id(both)["b0"].matched.measured_usd == Decimal(8)
    number = reconcile(
        ecp, statement(bucket(provider_dimensions={"project_id": "1"}), statement_id="number")
    )
    assert by_id(number)["b0"].status == "no_measured_match"


@pytest.mark.spec("§9.1 bucket-matching")
def test_events_of_other_providers_summaries_and_events_without_provider_are_ignored():
    ecp, _ = world()
    events = [
        charge("ours", "1"),
        charge("theirs", "2", provider="anthropic"),
        charge("nobody", "4", provider=None),
        charge("upper", "8", provider="OpenAI"),
        ExecutionEvent(
            event_id="summary",
            workflow_id="w",
            workflow_version="v1",
            run_id="r1",
            occurred_at=T0,
            cost_role=CostRole.SUMMARY,
            metadata={"provider": "openai"},
        ),
    ]
    report = reconcile(ecp, statement(bucket(amount="1")), events)
    matched = by_id(report)["b0"].matched
    assert (matched.measured_events, matched.estimated_events, matched.unmeasured_events) == (
        1,
        0,
        0,
    )
    assert totals(report)["telemetry_measured_usd"] == "1"


@pytest.mark.spec("§9.1 proportional-split")
def test_only_measured_cost_gets_billed_dollars_and_the_rest_stays_visible():
    ecp, _ = world()
    events = [
        charge("measured", "1", workflow_id="a"),
        charge("estimated", "5", workflow_id="b", measurement=ESTIMATED),
        charge("estimated-too", "0.5", workflow_id="b", measurement=ESTIMATED),
        charge("unmeasured", None, workflow_id="c"),
    ]
    report = reconcile(ecp, statement(bucket(amount="2.00")), events)
    allocation = by_id(report)["b0"]
    matched = allocation.matched
    assert (matched.measured_events, matched.estimated_events, matched.unmeasured_events) == (
        1,
        2,
        1,
    )
    assert (matched.measured_usd, matched.estimated_usd) == (Decimal(1), Decimal("5.5"))
    assert groups(allocation) == [("a", "v1", "unresolved", "2.00", "1")]
    assert totals(report)["telemetry_measured_usd"] == "1"
    assert totals(report)["telemetry_variance_usd"] == "1.00"


@pytest.mark.spec("§9.1 proportional-split", "§2.9 charge-revisions")
def test_charge_revisions_change_the_measured_weight():
    ecp, _ = world()
    events = [
        charge("ea", "1", workflow_id="a"),
        charge("eb", "1", workflow_id="b"),
        charge("ec", "1", workflow_id="c"),
    ]
    ecp.evidence.ingest_revisions(
        "t",
        [
            ChargeRevision(event_id="rb1", charge_id="eb", revised_at=T0, cost_usd=Decimal(9)),
            ChargeRevision(
                event_id="rb2",
                charge_id="eb",
                revised_at=T0 + timedelta(days=1),
                cost_usd=Decimal(3),
            ),
            ChargeRevision(
                event_id="rc",
                charge_id="ec",
                revised_at=T0,
                cost_usd=None,
                cost_measurement=UNMEASURED,
            ),
        ],
    )
    report = reconcile(ecp, statement(bucket(amount="8.00")), events)
    allocation = by_id(report)["b0"]
    assert groups(allocation) == [
        ("a", "v1", "unresolved", "2.00", "1"),
        ("b", "v1", "unresolved", "6.00", "3"),
    ]
    assert (allocation.matched.measured_events, allocation.matched.unmeasured_events) == (2, 1)
    assert totals(report)["telemetry_measured_usd"] == "4"


@pytest.mark.spec("§7 overlapping-buckets")
def test_overlapping_buckets_are_refused_as_a_group_and_their_dollars_unreconciled():
    ecp, _ = world()
    data = statement(
        bucket("b0", "1.00", start=T0, end=hour(2), provider_dimensions={"project_id": "p1"}),
        bucket(
            "b1", "2.00", start=hour(1), end=hour(3)
        ),  # no scope: overlaps b0 and b3 in [1h, 2h)
        bucket("b2", "4.00", start=hour(3), end=hour(4)),  # starts where b1 ends: no overlap
        bucket("b3", "8.00", start=T0, end=hour(2), provider_dimensions={"project_id": "p2"}),
        bucket(
            "b4",
            "16.00",
            start=hour(5),
            end=hour(6),
            model="m1",
            provider_dimensions={"project_id": "p9"},
        ),
        bucket(
            "b5",
            "32.00",
            start=hour(5),
            end=hour(6),
            model="m2",
            provider_dimensions={"project_id": "p9"},
        ),
        bucket("b6", "64.00", start=hour(7), end=hour(8), model="m1"),
        bucket("b7", "128.00", start=hour(7.5), end=hour(9), provider_dimensions={"region": "eu"}),
    )
    events = [
        charge("e0", "1", at=hour(0.5), project_id="p1"),
        charge("e1", "1", at=hour(1.5)),
        charge("e2", "1", at=hour(3.5)),
        charge("e3", "1", at=hour(0.5), project_id="p2"),
        charge("e4", "1", at=hour(5), model="m1", project_id="p9"),
        charge("e5", "1", at=hour(5), model="m2", project_id="p9"),
        charge("e6", "1", at=hour(7.7), model="m1", region="eu"),
    ]
    report = reconcile(ecp, data, events)
    found = by_id(report)
    assert {k: (str(a.status), list(a.overlaps_with)) for k, a in found.items()} == {
        "b0": ("overlapping", ["b1"]),
        "b1": ("overlapping", ["b0", "b3"]),
        "b2": ("allocated", []),
        "b3": ("overlapping", ["b1"]),
        "b4": ("allocated", []),
        "b5": ("allocated", []),
        "b6": ("overlapping", ["b7"]),
        "b7": ("overlapping", ["b6"]),
    }
    for key in ("b0", "b1", "b3", "b6", "b7"):
        assert found[key].groups == ()
    # Refused buckets still show what they matched.
    assert found["b1"].matched.measured_events == 1
    assert found["b6"].matched.measured_events == 1 and found["b7"].matched.measured_events == 1
    figures = totals(report)
    assert (figures["allocated_billed_usd"], figures["unreconciled_billed_usd"]) == (
        "52.00",
        "203.00",
    )
    assert figures["unbilled_telemetry_usd"] == "0"
    assert report.closure_state == "unreconciled"


@pytest.mark.spec("§7 overlapping-buckets")
def test_buckets_of_different_projects_at_the_same_time_do_not_overlap():
    ecp, _ = world()
    define(ecp)
    data = statement(
        bucket("p1", "1.50", provider_dimensions={"project_id": "p1"}),
        bucket("p2", "2.50", provider_dimensions={"project_id": "p2"}),
    )
    events = [charge("e1", "1.5", project_id="p1"), charge("e2", "2.5", project_id="p2")]
    report = reconcile(ecp, data, events, [outcome("o1", "r1", True)])
    assert [(a.bucket_id, str(a.status), a.overlaps_with) for a in report.allocations] == [
        ("p1", "allocated", ()),
        ("p2", "allocated", ()),
    ]
    assert report.closure_state == "reconciled"


@pytest.mark.spec("§3.5 closure-state")
def test_a_bucket_without_measured_cost_is_no_measured_match():
    ecp, _ = world()
    data = statement(
        bucket("empty", "1.00", start=T0, end=hour(1)),
        bucket("estimated", "2.00", start=hour(1), end=hour(2)),
        bucket("zero", "4.00", start=hour(2), end=hour(3)),
        bucket("fine", "8.00", start=hour(3), end=hour(4)),
    )
    events = [
        charge("est", "1", at=hour(1), measurement=ESTIMATED),
        charge("unm", None, at=hour(1.5)),
        charge("zero", "0", at=hour(2)),
        charge("fine", "2", at=hour(3)),
    ]
    report = reconcile(ecp, data, events)
    found = by_id(report)
    assert {k: str(a.status) for k, a in found.items()} == {
        "empty": "no_measured_match",
        "estimated": "no_measured_match",
        "zero": "no_measured_match",
        "fine": "allocated",
    }
    assert found["estimated"].groups == () and found["zero"].groups == ()
    assert (found["zero"].matched.measured_events, found["zero"].matched.measured_usd) == (
        1,
        Decimal(0),
    )
    assert found["estimated"].matched.estimated_usd == Decimal(1)
    figures = totals(report)
    assert (figures["allocated_billed_usd"], figures["unreconciled_billed_usd"]) == ("8.00", "7.00")
    assert report.closure_state == "unreconciled"


@pytest.mark.spec("§2.9 reconciliation-report")
def test_outcome_statuses_of_the_runs_the_dollars_paid_for():
    ecp, _ = world()
    define(ecp, "w", "v1")
    events = [
        charge("s", "1", run_id="r1"),
        charge("f", "2", run_id="r2"),
        charge("none", "3", run_id="r3"),  # no outcome asserted
        charge("unattributed", "4", run_id=None),  # no run at all
        charge("future", "5", run_id="r4"),  # outcome dated after the clock
        charge("other-type", "6", run_id="r5"),  # outcome of another type
        charge("undefined", "7", run_id="r1", workflow_id="w2"),  # no outcome definition
        charge("other-version", "8", run_id="r1", version="v2"),
    ]  # v2 has no definition
    outcomes = [
        outcome("o1", "r1", True),
        outcome("o2", "r2", False),
        outcome("o4", "r4", True, at=NOW + timedelta(seconds=1)),
        outcome("o5", "r5", True, outcome_type="other"),
        outcome("o6", "r1", True, workflow_id="w2"),
        outcome("o7", "r1", True, version="v2"),
    ]
    report = reconcile(ecp, statement(bucket(amount="36")), events, outcomes)
    assert groups(by_id(report)["b0"]) == [
        ("w", "v1", "failure", "2", "2"),
        ("w", "v1", "success", "1", "1"),
        ("w", "v1", "unresolved", "18", "18"),
        ("w", "v2", "unresolved", "8", "8"),
        ("w2", "v1", "unresolved", "7", "7"),
    ]
    assert totals(report)["outcome_unresolved_usd"] == "33"
    assert report.closure_state == "outcomes_unresolved"


@pytest.mark.spec("§2.9 reconciliation-report")
def test_reports_are_computed_from_the_evidence_as_it_stands():
    ecp, clock = world(T0 + timedelta(hours=2))
    define(ecp)
    events = [charge("e1", "1", run_id="r1")]
    report = reconcile(
        ecp,
        statement(bucket(amount="1")),
        events,
        [outcome("late", "r1", True, at=T0 + timedelta(hours=3))],
    )
    assert (report.as_of, report.closure_state) == (T0 + timedelta(hours=2), "outcomes_unresolved")
    clock.advance(3600)
    later = ecp.reconciliation.report("t", "openai", "s1")
    assert (later.as_of, later.closure_state) == (T0 + timedelta(hours=3), "reconciled")


# --- closure states -----------------------------------------------------------------------------


def resolved_world():
    """Two runs of w/v1: r1 succeeded (cost 1), r2 failed (cost 2)."""
    ecp, _ = world()
    define(ecp)
    ecp.evidence.ingest_executions(
        "t",
        [charge("e1", "1", run_id="r1", at=hour(1)), charge("e2", "2", run_id="r2", at=hour(2))],
    )
    ecp.evidence.ingest_outcomes("t", [outcome("o1", "r1", True), outcome("o2", "r2", False)])
    return ecp


@pytest.mark.spec("§3.5 closure-state")
def test_closure_reconciled_when_every_dollar_is_allocated_resolved_and_measured():
    ecp = resolved_world()
    report = reconcile(ecp, statement(bucket(amount="3.00")))
    assert report.closure_state == "reconciled"
    assert groups(by_id(report)["b0"]) == [
        ("w", "v1", "failure", "2.00", "2"),
        ("w", "v1", "success", "1.00", "1"),
    ]
    assert totals(report) == {
        "billed_total_usd": "3.00",
        "allocated_billed_usd": "3.00",
        "unreconciled_billed_usd": "0.00",
        "telemetry_measured_usd": "3",
        "telemetry_variance_usd": "0.00",
        "unbilled_telemetry_usd": "0",
        "outcome_unresolved_usd": "0",
    }


@pytest.mark.spec("§3.5 closure-state")
def test_closure_allocated_with_variance_when_the_bill_and_telemetry_differ():
    ecp = resolved_world()
    over = reconcile(ecp, statement(bucket(amount="3.30"), statement_id="over"))
    assert over.closure_state == "allocated_with_variance"
    assert groups(by_id(over)["b0"]) == [
        ("w", "v1", "failure", "2.20", "2"),
        ("w", "v1", "success", "1.10", "1"),
    ]
    assert totals(over)["telemetry_variance_usd"] == "0.30"
    # Telemetry the bill does not cover: a negative variance, and the unbilled part shown.
    under = reconcile(
        ecp, statement(bucket(amount="1", start=T0, end=hour(1.5)), statement_id="under")
    )
    assert under.closure_state == "allocated_with_variance"
    assert (totals(under)["telemetry_variance_usd"], totals(under)["unbilled_telemetry_usd"]) == (
        "-2",
        "2",
    )


@pytest.mark.spec("§3.5 closure-state")
def test_closure_outcomes_unresolved_comes_before_variance():
    ecp = resolved_world()
    ecp.evidence.ingest_executions("t", [charge("e3", "1", run_id="r3", at=hour(3))])
    report = reconcile(ecp, statement(bucket(amount="8")))
    assert report.closure_state == "outcomes_unresolved"
    assert totals(report)["outcome_unresolved_usd"] == "2"
    assert totals(report)["telemetry_variance_usd"] == "4"


@pytest.mark.spec("§3.5 closure-state")
def test_closure_unreconciled_comes_first():
    ecp = resolved_world()
    ecp.evidence.ingest_executions("t", [charge("e3", "1", run_id="r3", at=hour(3))])
    data = statement(
        bucket("b0", "3", start=T0, end=hour(3)),
        bucket("b1", "1", start=hour(3), end=hour(4)),
        bucket("b2", "5", start=hour(4), end=hour(5)),
    )
    report = reconcile(ecp, data)
    assert [str(a.status) for a in report.allocations] == [
        "allocated",
        "allocated",
        "no_measured_match",
    ]
    assert report.closure_state == "unreconciled"


# --- rounding -----------------------------------------------------------------------------------


@pytest.mark.spec("§9.1 proportional-split")
def test_ten_split_three_ways_gives_the_extra_unit_to_the_earliest_group():
    ecp, _ = world()
    events = [charge(f"e{name}", "1", workflow_id=name) for name in ("c", "a", "b")]
    report = reconcile(ecp, statement(bucket(amount="10")), events)
    assert [(g.workflow_id, str(g.billed_usd)) for g in by_id(report)["b0"].groups] == [
        ("a", "3.333333333334"),
        ("b", "3.333333333333"),
        ("c", "3.333333333333"),
    ]
    assert sum(g.billed_usd for g in by_id(report)["b0"].groups) == Decimal(10)


@pytest.mark.spec("§9.1 proportional-split")
def test_split_rounding_examples():
    assert [str(p) for p in split(Decimal(10), [Decimal(1)] * 3)] == [
        "3.333333333334",
        "3.333333333333",
        "3.333333333333",
    ]
    # The largest remainder gets the leftover unit, not simply the first part.
    assert [str(p) for p in split(Decimal(1), [Decimal(1), Decimal(2)])] == [
        "0.333333333333",
        "0.666666666667",
    ]
    # An amount with 18 decimals keeps its finer quantum.
    assert [str(p) for p in split(Decimal("1.000000000000000001"), [Decimal(1), Decimal(1)])] == [
        "0.500000000000000001",
        "0.500000000000000000",
    ]
    assert [str(p) for p in split(Decimal("1E-18"), [Decimal(1), Decimal(1)])] == ["1E-18", "0E-18"]
    # Exact parts are written with the amount's own decimals.
    assert [str(p) for p in split(Decimal("0.60"), [Decimal("0.10"), Decimal("0.40")])] == [
        "0.12",
        "0.48",
    ]
    assert [str(p) for p in split(Decimal(3), [Decimal(1), Decimal(2)])] == ["1", "2"]
    # Weights of zero get nothing; a single weight gets everything.
    assert [
        str(p) for p in split(Decimal("5.00"), [Decimal(0), Decimal("0.000000000000000001")])
    ] == ["0.00", "5.00"]


@pytest.mark.spec("C1 wire-values")
def test_report_amounts_keep_their_wire_spelling():
    ecp, _ = world()
    events = [charge("ea", "0.1", workflow_id="a"), charge("eb", "0.4", workflow_id="b")]
    report = reconcile(ecp, statement(bucket(amount="0.60")), events)
    wire = unstructure(report)
    assert [(g["billed_usd"], g["telemetry_usd"]) for g in wire["allocations"][0]["groups"]] == [
        ("0.12", "0.1"),
        ("0.48", "0.4"),
    ]


# --- the window limit ---------------------------------------------------------------------------


@pytest.mark.spec("§7 reconciliation-event-limit")
def test_more_than_50000_provider_events_in_the_period_are_refused():
    assert MAX_RECONCILIATION_EVENTS == 50_000
    ecp, _ = world()
    for first in range(0, MAX_RECONCILIATION_EVENTS, MAX_BATCH):
        ecp.evidence.ingest_executions(
            "t",
            [
                ExecutionEvent(
                    event_id=f"e{n}",
                    workflow_id="w",
                    workflow_version="v1",
                    run_id="r1",
                    occurred_at=T0 + timedelta(seconds=n),
                    cost_usd=Decimal("0.001"),
                    cost_measurement=MEASURED,
                    charge_id=f"e{n}",
                    metadata={"provider": "openai"},
                )
                for n in range(first, first + MAX_BATCH)
            ],
        )
    # Events of another provider, or at the period's exclusive end, do not count.
    ecp.evidence.ingest_executions(
        "t", [charge("other", "1", provider="anthropic"), charge("late", "1", at=END)]
    )
    full = reconcile(ecp, statement(bucket(amount="50")))
    assert totals(full)["telemetry_measured_usd"] == "50.000"
    assert full.closure_state == "outcomes_unresolved"
    ecp.evidence.ingest_executions("t", [charge("one-more", "1", at=END - timedelta(seconds=1))])
    with pytest.raises(EvidenceWindowTooLarge) as refused:
        ecp.reconciliation.report("t", "openai", "s1")
    assert refused.value.code == "evidence_window_too_large"
    assert isinstance(refused.value, ValidationFailed)
    # A shorter statement answers again.
    short = reconcile(
        ecp,
        statement(bucket(amount="1", end=hour(1)), statement_id="short", period_end=iso(hour(1))),
    )
    assert by_id(short)["b0"].matched.measured_events == 3600


# --- method, Markdown and lookup ----------------------------------------------------------------


@pytest.mark.spec("§9 method-versions")
def test_the_method_version_and_its_legacy_reading():
    ecp = resolved_world()
    report = reconcile(ecp, statement(bucket(amount="3.00")))
    assert report.method_version == METHOD_VERSION == "measured-cost-proportional/1"
    payload = unstructure(report)
    assert report_method_version(payload) == "measured-cost-proportional/1"
    legacy = {key: value for key, value in payload.items() if key != "method_version"}
    assert report_method_version(legacy) == LEGACY_METHOD_VERSION == "legacy_unversioned"
    assert report_method_version(legacy | {"method_version": None}) == "legacy_unversioned"
    assert report_method_version(legacy | {"method_version": ""}) == "legacy_unversioned"
    assert (
        report_method_version({"method_version": "measured-cost-proportional/2"})
        == "measured-cost-proportional/2"
    )


@pytest.mark.spec("§4.3 bill-report")
def test_markdown_names_the_method_and_the_closure_state_and_every_bucket():
    ecp = resolved_world()
    data = statement(
        bucket("b|0", "3.00", start=T0, end=hour(3)),
        bucket("b1", "0.000000000000000001", start=hour(3), end=hour(4)),
    )
    report = reconcile(ecp, data)
    text = render_markdown(report)
    assert "`measured-cost-proportional/1`" in text
    assert "**unreconciled**" in text
    assert report.statement_digest in text
    assert "| b\\|0 | any | any | 3.00 | allocated | w | v1 | failure | 2.00 | 2 |" in text
    assert "| b1 | any | any | 0.000000000000000001 | no_measured_match |  |  |  |  |  |" in text
    rows = [
        line
        for line in text.splitlines()
        if "| allocated |" in line or "| no_measured_match |" in line
    ]
    assert len(rows) == 3
    reconciled = reconcile(ecp, statement(bucket(amount="3.00"), statement_id="s2"))
    assert "**reconciled**" in render_markdown(reconciled)


@pytest.mark.spec("§4.3 bill-report")
def test_an_unknown_statement_is_not_found():
    ecp, _ = world()
    imported(ecp, statement())
    with pytest.raises(NotFound):
        ecp.reconciliation.report("t", "openai", "nope")
    with pytest.raises(NotFound):
        ecp.reconciliation.report("t", "anthropic", "s1")
    with pytest.raises(NotFound):
        ecp.reconciliation.report("u", "openai", "s1")
    assert ecp.reconciliation.report("t", "openai", "s1").statement_id == "s1"
