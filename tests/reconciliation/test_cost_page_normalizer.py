"""The offline cost-page normalizer: one complete USD page of a provider's organization cost API
becomes a statement of day-and-project buckets that passes the import rules."""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.errors import ValidationFailed
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.reconciliation.model import ProviderStatement, SourceKind
from ecp_core.reconciliation.normalizer import normalize_cost_page, parse_page
from ecp_core.system import FixedClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

pytestmark = [pytest.mark.unit, pytest.mark.spec("§9.1 cost-page-normalizer")]

DAY1 = datetime(2026, 11, 1, tzinfo=UTC)
DAY2 = DAY1 + timedelta(days=1)
DAY3 = DAY2 + timedelta(days=1)
NOW = datetime(2026, 11, 5, tzinfo=UTC)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")


def unix(moment):
    return int(moment.timestamp())


def result(value, project="proj_a", *, line_item="gpt-x, input", currency="usd"):
    item = {
        "object": "organization.costs.result",
        "amount": {"value": value, "currency": currency},
        "line_item": line_item,
    }
    if project is not None:
        item["project_id"] = project
    return item


def day(start, *results, end=None):
    return {
        "object": "bucket",
        "start_time": unix(start),
        "end_time": unix(end or start + timedelta(days=1)),
        "results": list(results),
    }


def page(*days, **fields):
    return {"object": "page", "data": list(days), "has_more": False, "next_page": None, **fields}


def normalized(data, provider="openai", **options):
    """The statement a page becomes, read from its JSON text as the command line does."""
    text = data if isinstance(data, str) else json.dumps(data)
    return normalize_cost_page(parse_page(text), provider=provider, **options)


def refused(data, **options):
    with pytest.raises(ValidationFailed) as caught:
        normalized(data, **options)
    return [(error.loc, error.msg) for error in caught.value.errors]


def shape(statement):
    """The buckets by period and scope (bucket ids are unique; their spelling is not a contract)."""
    assert len({b.bucket_id for b in statement.buckets}) == len(statement.buckets)
    return sorted(
        (
            (
                b.period_start,
                b.period_end,
                b.provider_dimensions.get("project_id", ""),
                str(b.amount_usd),
                b.provider_dimensions,
                b.model,
            )
            for b in statement.buckets
        ),
        key=lambda row: row[:3],
    )


def test_line_items_are_consolidated_per_day_and_project():
    statement = normalized(
        page(
            day(
                DAY1,
                result(1.25, line_item="gpt-x, input"),
                result(0.75, line_item="gpt-x, output"),
                result(0.5, "proj_b"),
            ),
            day(
                DAY2,
                result(3, line_item="embeddings"),
                result(0.001, "proj_b"),
                result(0.002, "proj_b"),
            ),
        )
    )
    assert shape(statement) == [
        (DAY1, DAY2, "proj_a", "2.00", {"project_id": "proj_a"}, None),
        (DAY1, DAY2, "proj_b", "0.5", {"project_id": "proj_b"}, None),
        (DAY2, DAY3, "proj_a", "3", {"project_id": "proj_a"}, None),
        (DAY2, DAY3, "proj_b", "0.003", {"project_id": "proj_b"}, None),
    ]
    assert (statement.provider, statement.period_start, statement.period_end) == (
        "openai",
        DAY1,
        DAY3,
    )
    assert (statement.currency, statement.source_kind) == ("USD", SourceKind.COST_API)
    assert str(statement.billed_total_usd) == "5.503"
    assert statement.statement_id == "openai-20261101-20261103"


def test_amounts_are_read_exactly_from_the_json_text():
    text = (
        (
            '{"object": "page", "has_more": false, "next_page": null, "data": [{"start_time": START, '
            '"end_time": END, "results": [{"amount": {"value": 0.1, "currency": "usd"}, "project_id": "p"}, '
            '{"amount": {"value": 0.2, "currency": "usd"}, "project_id": "p"}, '
            '{"amount": {"value": 1e-18, "currency": "usd"}, "project_id": "q"}, '
            '{"amount": {"value": 0.30000000000000004, "currency": "USD"}, "project_id": "r"}]}]}'
        )
        .replace("START", str(unix(DAY1)))
        .replace("END", str(unix(DAY2)))
    )
    assert 0.1 + 0.2 != 0.3  # what binary floats would have made of it
    statement = normalized(text)
    assert [row[2:4] for row in shape(statement)] == [
        ("p", "0.3"),
        ("q", "1E-18"),
        ("r", "0.30000000000000004"),
    ]
    assert statement.billed_total_usd == Decimal("0.600000000000000041")


@pytest.mark.spec("§7 overlapping-buckets")
def test_a_result_without_a_project_becomes_an_unscoped_bucket_and_reconciles_as_overlapping():
    statement = normalized(page(day(DAY1, result(1, "proj_a"), result(2, None), result(4, None))))
    by_scope = {b.provider_dimensions.get("project_id"): b for b in statement.buckets}
    assert sorted(by_scope, key=str) == [None, "proj_a"]
    scoped, unscoped = by_scope["proj_a"], by_scope[None]
    assert (scoped.amount_usd, unscoped.amount_usd, unscoped.provider_dimensions) == (1, 6, {})
    assert (unscoped.period_start, unscoped.period_end, unscoped.model) == (DAY1, DAY2, None)
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    ecp.evidence.ingest_executions(
        "t",
        [
            ExecutionEvent(
                event_id=f"e{n}",
                workflow_id="w",
                workflow_version="v1",
                run_id="r1",
                occurred_at=DAY1 + timedelta(hours=n),
                cost_usd=Decimal(1),
                charge_id=f"e{n}",
                cost_measurement=CostMeasurement.MEASURED,
                metadata={"provider": "openai", "project_id": project},
            )
            for n, project in enumerate(["proj_a", "proj_b"])
        ],
    )
    ecp.reconciliation.import_statement(ADMIN, statement)
    report = ecp.reconciliation.report("t", "openai", statement.statement_id)
    found = {a.bucket_id: a for a in report.allocations}
    assert {(str(a.status), a.overlaps_with) for a in found.values()} == {
        ("overlapping", (unscoped.bucket_id,)),
        ("overlapping", (scoped.bucket_id,)),
    }
    assert (
        found[unscoped.bucket_id].matched.measured_events == 2
    )  # it would have matched both projects
    assert (str(report.totals.unreconciled_billed_usd), report.closure_state) == (
        "7",
        "unreconciled",
    )


def test_a_project_bucket_on_another_day_does_not_overlap_the_unscoped_one():
    statement = normalized(page(day(DAY1, result(1, None)), day(DAY2, result(2, "proj_a"))))
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    ecp.reconciliation.import_statement(ADMIN, statement)
    report = ecp.reconciliation.report("t", "openai", statement.statement_id)
    assert [a.overlaps_with for a in report.allocations] == [(), ()]


@pytest.mark.parametrize(
    "more",
    [{"has_more": True}, {"next_page": "page_abc"}, {"has_more": True, "next_page": "page_abc"}],
)
def test_a_page_that_says_more_pages_exist_is_refused(more):
    assert refused(page(day(DAY1, result(1)), **more)) == [
        (("has_more",), "the page says more pages exist; import one complete page")
    ]


@pytest.mark.parametrize("currency", ["eur", "EUR", ""])
def test_non_usd_amounts_are_refused(currency):
    assert refused(page(day(DAY1, result(1), result(2, currency=currency)))) == [
        (("data", 0, "results", 1, "amount", "currency"), "must be usd")
    ]


@pytest.mark.spec("§9.1 positive-amounts")
@pytest.mark.parametrize("value", [-0.01, -1, "1.00", None, True])
def test_credits_and_non_numeric_amounts_are_refused(value):
    [(loc, _)] = refused(page(day(DAY1, result(1)), day(DAY2, result(value))))
    assert loc[:4] == ("data", 1, "results", 0)


def test_zero_results_are_dropped():
    statement = normalized(
        page(
            day(DAY1, result(0, "proj_a"), result(0.0, "proj_b"), result(1, "proj_c")),
            day(DAY2, result(0, "proj_a")),
        )
    )
    assert [row[2:4] for row in shape(statement)] == [("proj_c", "1")]
    assert (statement.period_start, statement.period_end) == (DAY1, DAY2)


@pytest.mark.parametrize(
    "data",
    [page(day(DAY1, result(0), result(0, None))), page(day(DAY1))],
    ids=["only zeros", "no results"],
)
def test_a_page_with_nothing_billed_is_refused(data):
    assert refused(data) == [(("data",), "nothing was billed on this page")]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("start_time", unix(DAY1) + 0.5),
        ("end_time", unix(DAY2) - 0.001),
        ("start_time", "1793491200"),
        ("end_time", None),
    ],
)
def test_times_must_be_whole_unix_seconds(field, value):
    bucket = day(DAY1, result(1)) | {field: value}
    assert refused(page(bucket)) == [(("data", 0, field), "must be whole Unix seconds")]


def test_a_bucket_must_end_after_it_starts():
    assert refused(page(day(DAY1, result(1), end=DAY1))) == [
        (("data", 0, "end_time"), "must be after start_time")
    ]


@pytest.mark.parametrize(
    "data",
    [{"object": "list", "data": []}, [], page(), "not json {"],
    ids=["not a page", "an array", "no buckets", "not JSON"],
)
def test_what_is_not_one_cost_page_is_refused(data):
    assert refused(data)


def test_the_statement_passes_the_import_rules_and_replays_identically():
    data = page(
        day(DAY1, result(1.25), result(0.5, "proj_b"), result(0.25, None)),
        day(DAY2, result(0.000000001, "proj_b")),
    )
    statement = normalized(data)
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    stored, created = ecp.reconciliation.import_statement(ADMIN, statement)
    assert created is True
    # What the command line sends is the statement's JSON; it imports as the same statement.
    wire = structure(json.loads(json.dumps(unstructure(statement))), ProviderStatement)
    assert wire == statement
    again, created = ecp.reconciliation.import_statement(ADMIN, wire)
    assert (created, again.digest) == (False, stored.digest)
    assert ecp.reconciliation.import_statement(ADMIN, normalized(data))[1] is False


def test_an_explicit_statement_id_and_provider_are_used():
    statement = normalized(
        page(day(DAY1, result(1))), provider="anthropic", statement_id="anthropic-2026-11"
    )
    assert (statement.statement_id, statement.provider) == ("anthropic-2026-11", "anthropic")
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    ecp.reconciliation.import_statement(ADMIN, statement)
    assert (
        ecp.reconciliation.report("t", "anthropic", "anthropic-2026-11").statement_id
        == "anthropic-2026-11"
    )


@pytest.mark.parametrize("statement_id", ["-bad", "a b", "x" * 193])
def test_an_invalid_explicit_statement_id_is_refused(statement_id):
    [(_, msg)] = refused(page(day(DAY1, result(1))), statement_id=statement_id)
    assert "statement_id" in msg


def test_a_project_id_that_cannot_be_a_scope_identifier_is_refused():
    assert refused(page(day(DAY1, result(1, "proj a"))))
    assert refused(page(day(DAY1, result(1, 42)))) == [
        (("data", 0, "results", 0, "project_id"), "must be a string")
    ]


def test_a_project_named_unscoped_does_not_collide_with_the_unscoped_bucket():
    statement = normalized(page(day(DAY1, result(1, "unscoped"), result(2, None))))
    assert len({b.bucket_id for b in statement.buckets}) == 2
    assert sorted(str(b.provider_dimensions) for b in statement.buckets) == [
        "{'project_id': 'unscoped'}",
        "{}",
    ]
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    assert ecp.reconciliation.import_statement(ADMIN, statement)[1] is True


@pytest.mark.parametrize("moment", [10**20, -(10**20)])
def test_a_time_out_of_range_is_refused_by_field(moment):
    bucket = day(DAY1, result(1)) | {"start_time": moment, "end_time": moment + 86400}
    [(loc, _)] = refused(page(bucket))
    assert loc == ("data", 0, "start_time")
