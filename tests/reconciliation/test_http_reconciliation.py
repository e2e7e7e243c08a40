"""Provider-bill import and reconciliation reports over HTTP on a real PostgreSQL.

A small known data set is posted through the evidence API and statements are imported and
reconciled through the reconciliation routes; each report is checked figure by figure against
sums worked out by hand. The 50,000-event limit is met with rows copied straight into the econ
table (set-up, not mocking).
"""

import base64
import copy
from datetime import UTC, datetime

import pytest
from starlette.testclient import TestClient
from tests.support.postgres import copy_executions

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "r" * 40
METHOD = "measured-cost-proportional/1"
BILLS = "/v1/reconciliation/provider-bills"
DAY = "2026-03-01"


def make_client(database, tmp_path):
    settings = Settings(
        database_url=database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(9, 41))).decode(),
    )
    return TestClient(create_app(settings, start_workers=False))


@pytest.fixture
def client(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path) as test_client:
        yield test_client


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def at(clock):
    return f"{DAY}T{clock}Z"


def charge(
    event_id,
    cost,
    *,
    clock,
    run_id=None,
    version="v1",
    provider="openai",
    measurement="measured",
    **metadata,
):
    return {
        "event_id": event_id,
        "workflow_id": "support",
        "workflow_version": version,
        "run_id": run_id,
        "occurred_at": at(clock),
        "charge_id": f"c-{event_id}",
        "cost_usd": cost,
        "cost_measurement": measurement,
        "metadata": {"provider": provider, **metadata},
    }


GPT_A = {"model": "gpt-x", "project_id": "proj_a"}
EXECUTIONS = [
    charge("e1", "1.00", clock="09:00:00", run_id="r1", **GPT_A),
    charge("e2", "0.50", clock="10:00:00", run_id="r2", **GPT_A),
    charge("e3", "0.50", clock="11:00:00", run_id="r3", version="v2", **GPT_A),
    charge(
        "e4", "0.20", clock="11:30:00", run_id="r1", measurement="estimated", **GPT_A
    ),  # seen, not billed
    charge(
        "e5", "0.40", clock="08:00:00", model="gpt-x", project_id="proj_b"
    ),  # no run: unresolved
    charge(
        "e6", "0.10", clock="13:00:00", **GPT_A
    ),  # after the morning buckets: unbilled telemetry
    charge(
        "e7", "5", clock="09:00:00", run_id="r1", provider="anthropic", **GPT_A
    ),  # another provider
    {
        **charge("e8", None, clock="09:00:00", run_id="r1", **GPT_A),
        "cost_role": "summary",
        "charge_id": None,
        "cost_measurement": "unmeasured",
    },  # structural: no money
    {
        **charge("e9", "7", clock="00:00:00", run_id="r1", **GPT_A),
        "occurred_at": "2026-03-02T00:00:00Z",
    },
]
OUTCOMES = [
    {
        "event_id": f"o-{run_id}",
        "workflow_id": "support",
        "workflow_version": version,
        "run_id": run_id,
        "outcome_type": "ticket_closed",
        "value": value,
        "asserted_at": at("12:00:00"),
    }
    for run_id, version, value in (("r1", "v1", True), ("r2", "v1", False), ("r3", "v2", True))
]


def bucket(bucket_id, amount, start="00:00:00", end="12:00:00", **fields):
    return {
        "bucket_id": bucket_id,
        "period_start": at(start),
        "period_end": at(end),
        "amount_usd": amount,
        **fields,
    }


def statement(statement_id, total, *buckets, start="00:00:00", end=None, **fields):
    return {
        "statement_id": statement_id,
        "provider": "openai",
        "period_start": at(start),
        "period_end": f"{DAY}T{end}Z" if end else "2026-03-02T00:00:00Z",
        "currency": "USD",
        "billed_total_usd": total,
        "source_kind": "manual",
        "buckets": list(buckets),
        **fields,
    }


# The whole day: a bucket per project in the morning, and an afternoon bucket nothing matches.
DAY_STATEMENT = statement(
    "openai-2026-03-01",
    "4.50",
    bucket("a-morning", "4.00", model="gpt-x", provider_dimensions={"project_id": "proj_a"}),
    bucket("b-morning", "0.30", provider_dimensions={"project_id": "proj_b"}),
    bucket(
        "c-afternoon",
        "0.20",
        start="12:00:00",
        end="23:59:59",
        provider_dimensions={"project_id": "proj_c"},
    ),
)


def load(client, tenant="acme"):
    """The known evidence, posted by an operator; the outcome definitions by an admin."""
    for kind, events in (("executions", EXECUTIONS), ("outcomes", OUTCOMES)):
        answer = client.post(
            f"/v1/evidence/{kind}", json={"events": events}, headers=auth("operator", tenant)
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["stored"] == len(events)
    for version in ("v1", "v2"):
        body = {
            "workflow_id": "support",
            "workflow_version": version,
            "outcome_type": "ticket_closed",
            "predicate": {"kind": "equals", "value": True},
        }
        assert (
            client.post(
                "/v1/debugger/outcome-definitions", json=body, headers=auth(tenant=tenant)
            ).status_code
            == 201
        )


def import_(client, body, role="admin", tenant="acme"):
    return client.post(BILLS, json=body, headers=auth(role, tenant))


def report(client, statement_id, role="analyst", tenant="acme", provider="openai", **params):
    return client.get(
        f"{BILLS}/{provider}/{statement_id}/report", params=params, headers=auth(role, tenant)
    )


def figures(client, statement_id, **kwargs):
    answer = report(client, statement_id, **kwargs)
    assert answer.status_code == 200, answer.text
    return answer.json()


def groups(allocation):
    return [
        (
            g["workflow_id"],
            g["workflow_version"],
            g["outcome_status"],
            g["billed_usd"],
            g["telemetry_usd"],
        )
        for g in allocation["groups"]
    ]


# --- import -----------------------------------------------------------------------------------


@pytest.mark.spec("§4.3 bill-import-replay")
def test_import_201_exact_replay_200_changed_content_409(client):
    created = import_(client, DAY_STATEMENT)
    assert created.status_code == 201, created.text
    answer = created.json()
    assert (
        answer["provider"],
        answer["statement_id"],
        answer["buckets"],
        answer["billed_total_usd"],
    ) == ("openai", "openai-2026-03-01", 3, "4.50")
    assert answer["digest"].startswith("sha256:") and len(answer["digest"]) == 71
    # The same statement respelled (buckets reordered, another offset, 4.5 for 4.50) is a replay.
    respelled = copy.deepcopy(DAY_STATEMENT)
    respelled["buckets"].reverse()
    respelled["period_start"] = "2026-03-01T01:00:00+01:00"
    respelled["billed_total_usd"] = "4.5"
    replay = import_(client, respelled)
    assert replay.status_code == 200, replay.text
    assert replay.json() == answer  # the stored statement's identity, digest and import time
    changed = copy.deepcopy(DAY_STATEMENT)
    changed["buckets"][0]["amount_usd"] = "3.99"
    changed["buckets"][1]["amount_usd"] = "0.31"
    conflict = import_(client, changed)
    assert conflict.status_code == 409
    assert conflict.headers["content-type"].startswith("application/problem+json")
    assert conflict.json()["code"] == "conflict"
    # Nothing changed: the report is still the first statement's, and it still replays as 200.
    load(client)
    stored = figures(client, "openai-2026-03-01")
    assert stored["statement_digest"] == answer["digest"]
    assert {a["bucket_id"]: a["amount_usd"] for a in stored["allocations"]} == {
        "a-morning": "4.00",
        "b-morning": "0.30",
        "c-afternoon": "0.20",
    }
    assert import_(client, DAY_STATEMENT).status_code == 200
    # The identity is (tenant, provider, statement_id): the changed content is new elsewhere.
    assert import_(client, {**changed, "provider": "anthropic"}).status_code == 201
    assert import_(client, changed, tenant="globex").status_code == 201


def _errors(answer):
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["code"] == "validation_failed"
    assert answer.headers["content-type"].startswith("application/problem+json")
    return [error["loc"] for error in body["errors"]]


def _valid():
    return statement(
        "s1",
        "1.50",
        bucket("b0", "1.00", provider_dimensions={"project_id": "proj_a"}),
        bucket("b1", "0.50", provider_dimensions={"project_id": "proj_b"}),
    )


def _with(change):
    data = _valid()
    change(data)
    return data


REJECTIONS = {
    "currency EUR": (lambda d: d.update(currency="EUR"), ["currency"]),
    "bucket sum below the total": (
        lambda d: d.update(billed_total_usd="1.500000000000000001"),
        ["billed_total_usd"],
    ),
    "bucket sum above the total": (
        lambda d: d.update(billed_total_usd="1.49"),
        ["billed_total_usd"],
    ),
    "duplicate bucket_id": (
        lambda d: d["buckets"][1].update(bucket_id="b0"),
        ["buckets", 1, "bucket_id"],
    ),
    "bucket starting before the statement": (
        lambda d: d["buckets"][0].update(period_start="2026-02-28T23:59:59Z"),
        ["buckets", 0, "period_start"],
    ),
    "bucket ending after the statement": (
        lambda d: d["buckets"][1].update(period_end="2026-03-02T00:00:01Z"),
        ["buckets", 1, "period_end"],
    ),
    "dimension api_key": (
        lambda d: d["buckets"][0].update(provider_dimensions={"api_key": "sk-secret"}),
        ["buckets", 0, "provider_dimensions"],
    ),
    "dimension customer_id": (
        lambda d: d["buckets"][0]["provider_dimensions"].update(customer_id="cus_1"),
        ["buckets", 0, "provider_dimensions"],
    ),
    "unknown statement property": (lambda d: d.update(invoice_number="INV-1"), ["invoice_number"]),
    "unknown bucket property": (
        lambda d: d["buckets"][0].update(prompt="hello"),
        ["buckets", 0, "prompt"],
    ),
    "zero bucket amount": (
        lambda d: d["buckets"][0].update(amount_usd="0") or d.update(billed_total_usd="0.50"),
        ["buckets", 0, "amount_usd"],
    ),
    "negative bucket amount (a credit)": (
        lambda d: d["buckets"][0].update(amount_usd="-1.00") or d.update(billed_total_usd="0.50"),
        ["buckets", 0, "amount_usd"],
    ),
    "amount as a JSON number": (
        lambda d: d["buckets"][0].update(amount_usd=1.0),
        ["buckets", 0, "amount_usd"],
    ),
    "statement_id of 193 characters": (
        lambda d: d.update(statement_id="s" * 193),
        ["statement_id"],
    ),
    "unknown source_kind": (lambda d: d.update(source_kind="scraped"), ["source_kind"]),
}


@pytest.mark.spec("§7 statement-validation", "C1 field-locations")
@pytest.mark.parametrize(("change", "loc"), list(REJECTIONS.values()), ids=list(REJECTIONS))
def test_each_broken_rule_is_a_422_naming_the_field_and_stores_nothing(client, change, loc):
    assert loc in _errors(import_(client, _with(change)))
    # Nothing was stored: the valid statement under the same id is new.
    assert import_(client, _valid()).status_code == 201


@pytest.mark.spec("§7 statement-validation")
def test_every_broken_rule_is_named_at_once(client):
    data = statement(
        "s1",
        "9.99",
        bucket("b0", "1.00", start="00:00:00", end="01:00:00"),
        bucket("b0", "0.50", start="01:00:00", end="01:00:00"),
    )
    assert sorted(map(str, _errors(import_(client, data)))) == sorted(
        map(str, [["buckets", 1, "bucket_id"], ["buckets", 1, "period_end"], ["billed_total_usd"]])
    )


# --- permissions and isolation ------------------------------------------------------------------


@pytest.mark.spec("§5 role-rules")
def test_only_an_admin_imports_and_admin_analyst_approver_read_reports(client):
    for role in ("operator", "analyst", "approver", "viewer"):
        refused = import_(client, DAY_STATEMENT, role=role)
        assert refused.status_code == 403, role
        assert refused.json()["code"] == "forbidden"
    assert client.post(BILLS, json=DAY_STATEMENT).status_code == 401
    assert import_(client, DAY_STATEMENT).status_code == 201  # the refusals stored nothing
    for role in ("admin", "analyst", "approver"):
        assert figures(client, "openai-2026-03-01", role=role)["method_version"] == METHOD
    for role in ("viewer", "operator"):
        refused = report(client, "openai-2026-03-01", role=role)
        assert refused.status_code == 403, role
        assert refused.json()["code"] == "forbidden"
    assert client.get(f"{BILLS}/openai/openai-2026-03-01/report").status_code == 401


@pytest.mark.spec("§4.3 bill-report")
def test_an_unknown_statement_is_404(client):
    assert import_(client, DAY_STATEMENT).status_code == 201
    for provider, statement_id in (
        ("openai", "nothing"),
        ("anthropic", "openai-2026-03-01"),
        ("openai", "OPENAI-2026-03-01"),
    ):
        missing = report(client, statement_id, provider=provider)
        assert missing.status_code == 404, (provider, statement_id)
        assert missing.json()["code"] == "not_found"


@pytest.mark.spec("§5 tenant-isolation")
def test_a_tenant_never_sees_another_tenants_statements_or_evidence(client):
    load(client)
    assert import_(client, DAY_STATEMENT).status_code == 201
    assert report(client, "openai-2026-03-01", tenant="globex").status_code == 404
    # globex imports the same id with its own content and reconciles it against its own evidence: none.
    theirs = statement("openai-2026-03-01", "1.00", bucket("all", "1.00", end="23:00:00"))
    assert import_(client, theirs, tenant="globex").status_code == 201
    answer = figures(client, "openai-2026-03-01", tenant="globex")
    assert answer["totals"]["telemetry_measured_usd"] == "0"
    assert [(a["bucket_id"], a["status"]) for a in answer["allocations"]] == [
        ("all", "no_measured_match")
    ]
    assert answer["closure_state"] == "unreconciled"
    # And acme's report is unchanged by globex.
    assert figures(client, "openai-2026-03-01")["totals"]["billed_total_usd"] == "4.50"


# --- reports --------------------------------------------------------------------------------------


@pytest.mark.spec("§4.3 bill-report", "§2.9 reconciliation-report")
def test_the_report_of_a_known_data_set(client):
    load(client)
    assert import_(client, DAY_STATEMENT).status_code == 201
    answer = figures(client, "openai-2026-03-01")
    assert answer["method_version"] == METHOD
    assert (answer["provider"], answer["statement_id"]) == ("openai", "openai-2026-03-01")
    assert (answer["period_start"], answer["period_end"]) == (
        "2026-03-01T00:00:00.000000Z",
        "2026-03-02T00:00:00.000000Z",
    )
    assert answer["statement_digest"].startswith("sha256:")
    assert answer["closure_state"] == "unreconciled"
    assert (
        answer["totals"]
        == {
            "billed_total_usd": "4.50",
            "allocated_billed_usd": "4.30",  # a-morning and b-morning
            "unreconciled_billed_usd": "0.20",  # c-afternoon matched nothing
            "telemetry_measured_usd": "2.50",  # e1 e2 e3 e5 e6 (e4 is estimated; e7 e8 e9 are not openai charges in the period)
            "telemetry_variance_usd": "2.00",
            "unbilled_telemetry_usd": "0.10",  # e6, after the morning buckets
            "outcome_unresolved_usd": "0.30",  # b-morning's dollars paid for e5, which has no run
        }
    )
    by_id = {a["bucket_id"]: a for a in answer["allocations"]}
    assert list(by_id) == ["a-morning", "b-morning", "c-afternoon"]
    morning = by_id["a-morning"]
    assert (
        morning["status"],
        morning["model"],
        morning["provider_dimensions"],
        morning["overlaps_with"],
    ) == ("allocated", "gpt-x", {"project_id": "proj_a"}, [])
    assert morning["matched"] == {
        "measured_events": 3,
        "estimated_events": 1,
        "unmeasured_events": 0,
        "measured_usd": "2.00",
        "estimated_usd": "0.20",
    }
    # 4.00 split by measured cost 1.00 : 0.50 : 0.50, grouped by version and outcome.
    assert groups(morning) == [
        ("support", "v1", "failure", "1.00", "0.50"),
        ("support", "v1", "success", "2.00", "1.00"),
        ("support", "v2", "success", "1.00", "0.50"),
    ]
    assert groups(by_id["b-morning"]) == [("support", "v1", "unresolved", "0.30", "0.40")]
    afternoon = by_id["c-afternoon"]
    assert (afternoon["status"], afternoon["groups"], afternoon["matched"]["measured_events"]) == (
        "no_measured_match",
        [],
        0,
    )
    as_json = report(client, "openai-2026-03-01", format="json")
    assert as_json.headers["content-type"].startswith("application/json")
    assert {**as_json.json(), "as_of": None} == {**answer, "as_of": None}


@pytest.mark.spec("§3.5 closure-state")
@pytest.mark.parametrize(
    ("statement_id", "body", "closure"),
    [
        # Only the morning's runs of proj_a, billed exactly what was measured: it all closes.
        (
            "reconciled",
            statement(
                "reconciled",
                "2.00",
                bucket(
                    "a",
                    "2.00",
                    start="09:00:00",
                    model="gpt-x",
                    provider_dimensions={"project_id": "proj_a"},
                ),
                start="09:00:00",
                end="12:00:00",
            ),
            "reconciled",
        ),
        (
            "variance",
            statement(
                "variance",
                "2.10",
                bucket("a", "2.10", start="09:00:00", model="gpt-x"),
                start="09:00:00",
                end="12:00:00",
            ),
            "allocated_with_variance",
        ),
        (
            "unresolved",
            statement(
                "unresolved",
                "0.40",
                bucket("b", "0.40", start="08:00:00", end="09:00:00"),
                start="08:00:00",
                end="09:00:00",
            ),
            "outcomes_unresolved",
        ),
        # Two buckets that one event could fall into: both refused, all dollars unreconciled.
        (
            "overlap",
            statement(
                "overlap",
                "3.00",
                bucket("x", "1.00", start="09:00:00", end="10:00:00"),
                bucket("y", "2.00", start="09:30:00", end="12:00:00", model="gpt-x"),
                start="09:00:00",
                end="12:00:00",
            ),
            "unreconciled",
        ),
    ],
)
def test_each_closure_state(client, statement_id, body, closure):
    load(client)
    assert import_(client, body).status_code == 201
    answer = figures(client, statement_id)
    assert answer["closure_state"] == closure
    totals = answer["totals"]
    expected = {
        "reconciled": ("2.00", "0.00", "2.00", "0.00", "0"),
        "variance": ("2.10", "0.00", "2.00", "0.10", "0"),
        "unresolved": ("0.40", "0.00", "0.40", "0.00", "0.40"),
        "overlap": ("0", "3.00", "2.00", "1.00", "0"),
    }[statement_id]
    assert (
        totals["allocated_billed_usd"],
        totals["unreconciled_billed_usd"],
        totals["telemetry_measured_usd"],
        totals["telemetry_variance_usd"],
        totals["outcome_unresolved_usd"],
    ) == expected
    if statement_id == "overlap":
        assert [
            (a["bucket_id"], a["status"], a["overlaps_with"]) for a in answer["allocations"]
        ] == [("x", "overlapping", ["y"]), ("y", "overlapping", ["x"])]


@pytest.mark.spec("§4.3 bill-report")
def test_the_report_as_markdown(client):
    load(client)
    assert import_(client, DAY_STATEMENT).status_code == 201
    answer = report(client, "openai-2026-03-01", role="approver", format="markdown")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/markdown")
    text = answer.text
    assert text.startswith("# Reconciliation: openai statement openai-2026-03-01")
    assert f"- method_version: `{METHOD}`" in text
    assert "- closure state: **unreconciled**" in text
    assert "| billed_total_usd | 4.50 |" in text
    assert "| unbilled_telemetry_usd | 0.10 |" in text
    assert (
        "| a-morning | gpt-x | project_id=proj_a | 4.00 | allocated | support | v2 | success | 1.00 | 0.50 |"
        in text
    )
    assert "| c-afternoon | any | project_id=proj_c | 0.20 | no_measured_match |" in text
    bad = report(client, "openai-2026-03-01", format="pdf")
    assert _errors(bad) == [["query", "format"]]


@pytest.mark.spec("§2.9 reconciliation-report")
def test_reports_follow_the_evidence_as_it_stands(client):
    assert import_(client, DAY_STATEMENT).status_code == 201
    before = figures(client, "openai-2026-03-01")
    assert before["totals"]["telemetry_measured_usd"] == "0"
    assert {a["status"] for a in before["allocations"]} == {"no_measured_match"}
    load(client)
    after = figures(client, "openai-2026-03-01")
    assert after["totals"]["allocated_billed_usd"] == "4.30"
    # A charge revision re-weights the split: e2 (r2, failure) now cost 1.50, so 4.00 splits
    # 1.5 : 1 : 0.5, exactly at 1E-12 (the odd unit to the largest remainder, v2's).
    revision = {
        "event_id": "rev-e2",
        "charge_id": "c-e2",
        "revised_at": at("20:00:00"),
        "cost_usd": "1.50",
        "cost_measurement": "measured",
    }
    assert (
        client.post(
            "/v1/evidence/charge-revisions", json={"events": [revision]}, headers=auth("operator")
        ).status_code
        == 200
    )
    morning = next(
        a
        for a in figures(client, "openai-2026-03-01")["allocations"]
        if a["bucket_id"] == "a-morning"
    )
    assert groups(morning) == [
        ("support", "v1", "failure", "2.00", "1.50"),
        ("support", "v1", "success", "1.333333333333", "1.00"),
        ("support", "v2", "success", "0.666666666667", "0.50"),
    ]


# --- the 50,000-event limit -----------------------------------------------------------------------


@pytest.mark.spec("§7 reconciliation-event-limit")
def test_a_statement_period_of_more_than_50000_execution_events_is_refused(client, fresh_database):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    copy_executions(fresh_database, 50_000, start=start, metadata='{"provider": "openai"}')
    whole_day = statement("day", "60", bucket("all", "60", end="23:59:59"))
    assert import_(client, whole_day).status_code == 201
    full = figures(client, "day")  # exactly 50,000 events: answered in full
    assert (full["totals"]["telemetry_measured_usd"], full["totals"]["telemetry_variance_usd"]) == (
        "50.000",
        "10.000",
    )
    assert full["allocations"][0]["matched"]["measured_events"] == 50_000
    assert full["allocations"][0]["groups"] == [
        {
            "workflow_id": "support",
            "workflow_version": "v1",
            "outcome_status": "unresolved",
            "billed_usd": "60",
            "telemetry_usd": "50.000",
        }
    ]
    one_more = charge("one-more", "1", clock="23:00:00", run_id="r1", version="v2")
    assert (
        client.post(
            "/v1/evidence/executions", json={"events": [one_more]}, headers=auth("operator")
        ).status_code
        == 200
    )
    for fmt in ("json", "markdown"):
        refused = report(client, "day", format=fmt)
        assert refused.status_code == 422, fmt
        body = refused.json()
        assert body["code"] == "evidence_window_too_large"
        assert body["type"] == "urn:ecp:error:evidence_window_too_large"
        assert "50,000" in body["detail"]
    # A statement whose period leaves out the first bulk event holds 50,000 again and is answered;
    # other providers' and other tenants' statements are not affected.
    later = statement(
        "later", "1", bucket("all", "1", start="00:00:01", end="23:59:59"), start="00:00:01"
    )
    assert import_(client, later).status_code == 201
    assert figures(client, "later")["allocations"][0]["matched"]["measured_events"] == 50_000
    assert import_(client, {**whole_day, "provider": "anthropic"}).status_code == 201
    assert figures(client, "day", provider="anthropic")["totals"]["telemetry_measured_usd"] == "0"
    assert import_(client, whole_day, tenant="globex").status_code == 201
    assert figures(client, "day", tenant="globex")["totals"]["telemetry_measured_usd"] == "0"
