"""Evidence ingestion, outcome definitions and the debugger over HTTP on a real PostgreSQL.

A small known data set is posted through the API and every debugger route is checked figure by
figure; the 50,000-event limit is met with rows copied straight into the econ table (set-up, not
mocking). Retention erasure deletes a run's economic events, and fails, retryably, while the
economic schema is missing.
"""

import base64
import itertools
import json
import pathlib
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient
from tests.support.postgres import copy_executions

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_postgres import apply_migrations, rollback_migrations
from ecp_postgres.migrations import migrations
from ecp_postgres.migrations import status as migration_status

pytestmark = pytest.mark.integration

SECRET = "e" * 40
METHOD = "observed-accounting/1"
WINDOW = {"workflow_id": "support", "start": "2026-03-01T00:00:00Z", "end": "2026-03-02T00:00:00Z"}
ROUTES = ("timeline", "cohorts", "breakage", "report")


def make_client(database, tmp_path, **extra):
    settings = Settings(
        database_url=database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(5, 37))).decode(),
        **extra,
    )
    return TestClient(create_app(settings, start_workers=False))


@pytest.fixture
def client(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path) as test_client:
        yield test_client


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def execution(
    event_id, cost=None, *, run_id=None, version="v1", at="2026-03-01T09:00:00Z", **fields
):
    """A charge (priced when ``cost`` is given, else unknown) unless ``cost_role`` says otherwise."""
    event = {
        "event_id": event_id,
        "workflow_id": "support",
        "workflow_version": version,
        "occurred_at": at,
        "run_id": run_id,
        **fields,
    }
    if event.get("cost_role") != "summary":
        event.setdefault("charge_id", f"c-{event_id}")
        event["cost_usd"] = cost
        event.setdefault("cost_measurement", "unmeasured" if cost is None else "measured")
    return event


def outcome(
    event_id,
    run_id,
    value,
    *,
    version="v1",
    outcome_type="ticket_closed",
    at="2026-03-01T13:00:00Z",
):
    return {
        "event_id": event_id,
        "workflow_id": "support",
        "workflow_version": version,
        "run_id": run_id,
        "outcome_type": outcome_type,
        "value": value,
        "asserted_at": at,
    }


def definition(version="v1", outcome_type="ticket_closed", predicate=None):
    return {
        "workflow_id": "support",
        "workflow_version": version,
        "outcome_type": outcome_type,
        "predicate": predicate or {"kind": "equals", "value": True},
    }


EXECUTIONS = [
    execution(
        "e1",
        "0.10",
        run_id="r1",
        at="2026-03-01T09:15:00Z",
        step_id="draft",
        subject_id="acct-1",
        dimensions={"plan": "pro"},
    ),
    execution(
        "e2",
        "0.05",
        run_id="r1",
        at="2026-03-01T09:20:00Z",
        step_id="draft",
        subject_id="acct-1",
        dimensions={"plan": "pro"},
        attempt=2,
    ),
    execution(
        "e3",
        "0.20",
        run_id="r2",
        at="2026-03-01T10:05:00Z",
        step_id="draft",
        subject_id="acct-2",
        dimensions={"plan": "free"},
        cost_measurement="estimated",
    ),
    execution(
        "e4",
        run_id="r2",
        at="2026-03-01T10:06:00Z",
        step_id="review",
        subject_id="acct-2",
        cost_role="summary",
    ),
    execution(
        "e5", None, run_id="r3", at="2026-03-01T11:00:00Z", step_id="draft", subject_id="acct-1"
    ),
    execution(
        "e6", "1E-8", at="2026-03-01T11:30:00Z", metadata={"provider": "openai", "model": "gpt-x"}
    ),
    execution(
        "e7",
        "0.30",
        run_id="r4",
        version="v2",
        at="2026-03-01T10:30:00Z",
        step_id="draft",
        subject_id="acct-2",
        dimensions={"plan": "free"},
    ),
    execution(
        "e8",
        "0.40",
        run_id="r5",
        version="v2",
        at="2026-03-01T12:00:00Z",
        step_id="send",
        subject_id="acct-3",
        attempt=2,
    ),
    # Outside the window: at its exclusive end, and in another workflow.
    execution("late", "100", run_id="r1", at="2026-03-02T00:00:00Z", step_id="draft"),
    {**execution("other-workflow", "100", run_id="r1"), "workflow_id": "billing"},
]
OUTCOMES = [
    outcome("o1", "r1", True),
    outcome("o2", "r2", False),
    outcome("o3", "r3", True, at="2099-01-01T00:00:00Z"),  # in the future: not yet counted
    outcome("o4", "r4", 5, version="v2", outcome_type="csat"),
    outcome("o5", "r5", 2, version="v2", outcome_type="csat"),
    outcome("o6", "r5", 5, version="v2", outcome_type="escalation"),  # not the defined type
]
REVISIONS = [
    {
        "event_id": "rev1",
        "charge_id": "c-e2",
        "revised_at": "2026-03-02T08:00:00Z",
        "cost_usd": "0.07",
        "cost_measurement": "measured",
    }
]
INVENTORY = {
    "event_id": "inv1",
    "workflow_id": "support",
    "workflow_version": "v1",
    "capture_start": "2026-03-01T00:00:00Z",
    "capture_end": "2026-03-01T23:59:59Z",
    "terminal_run_ids": ["r1", "r2", "r3"],
    "windows": [
        {"source_window_id": "sw1", "expected_events": 6, "event_ids_digest": "sha256:" + "a" * 64}
    ],
}


def post(client, kind, events, role="operator", tenant="acme"):
    return client.post(f"/v1/evidence/{kind}", json={"events": events}, headers=auth(role, tenant))


def load(client, tenant="acme"):
    """The known data set, posted by an operator; definitions by an admin."""
    for kind, events in (
        ("executions", EXECUTIONS),
        ("outcomes", OUTCOMES),
        ("charge-revisions", REVISIONS),
        ("source-inventories", [INVENTORY]),
    ):
        answer = post(client, kind, events, tenant=tenant)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"received": len(events), "stored": len(events), "replayed": 0}
    for body in (
        definition("v1"),
        definition("v2", "csat", {"kind": "at_least", "threshold": "4"}),
    ):
        assert (
            client.post(
                "/v1/debugger/outcome-definitions", json=body, headers=auth(tenant=tenant)
            ).status_code
            == 201
        )


def read(client, route, role="analyst", tenant="acme", **query):
    answer = client.get(
        f"/v1/debugger/{route}", params={**WINDOW, **query}, headers=auth(role, tenant)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def figures(accounting, *names):
    return tuple(accounting[name] for name in names)


MONEY = (
    "known_cost_usd",
    "measured_cost_usd",
    "estimated_cost_usd",
    "failure_tax_usd",
    "repeated_attempt_usd",
)
RUNS = ("events", "summary_events", "runs", "successful_runs", "failed_runs")


def without_as_of(answer):
    """The answer without ``scope.as_of`` (the server's clock moves between two reads)."""
    return {**answer, "scope": {k: v for k, v in answer["scope"].items() if k != "as_of"}}


def gaps(accounting):
    incomplete = accounting["incomplete"]
    return (
        incomplete["complete"],
        incomplete["unknown_cost_events"],
        incomplete["unresolved_runs"],
        incomplete["unattributed_events"],
    )


@pytest.mark.spec("§4.4 debugger-timeline")
def test_the_timeline_of_a_known_data_set(client):
    load(client)
    answer = read(client, "timeline", granularity="hour")
    assert answer["method_version"] == METHOD
    assert answer["granularity"] == "hour"
    assert answer["scope"]["workflow_id"] == "support"
    assert answer["scope"]["start"].startswith("2026-03-01T00:00:00")
    totals = answer["totals"]
    assert figures(totals, *RUNS) == (8, 1, 5, 2, 2)
    # e2 is priced by its revision (0.07, not 0.05); e5's unknown cost is never a zero.
    assert figures(totals, *MONEY) == ("1.07000001", "0.87000001", "0.20", "0.60", "0.47")
    assert totals["repeated_attempt_events"] == 2
    assert (totals["cost_per_successful_outcome_usd"], totals["failure_rate"]) == (None, "0.5")
    assert gaps(totals) == (False, 1, 1, 1)
    versions = {row["workflow_version"]: row for row in answer["versions"]}
    assert [row["workflow_version"] for row in answer["versions"]] == [
        "v2",
        "v1",
    ]  # most failure tax first
    assert versions["v2"]["outcome_definition"] is True
    v2 = versions["v2"]["accounting"]
    assert figures(v2, *RUNS) == (2, 0, 2, 1, 1)
    assert (v2["known_cost_usd"], v2["failure_tax_usd"], v2["cost_per_successful_outcome_usd"]) == (
        "0.70",
        "0.40",
        "0.7",
    )
    assert gaps(v2) == (True, 0, 0, 0)
    v1 = versions["v1"]["accounting"]
    assert figures(v1, *RUNS) == (6, 1, 3, 1, 1)
    assert figures(v1, *MONEY) == ("0.37000001", "0.17000001", "0.20", "0.20", "0.07")
    assert gaps(v1) == (False, 1, 1, 1)
    rows = [
        (
            row["workflow_version"],
            row["window_start"][11:16],
            row["window_end"][11:16],
            row["accounting"]["events"],
            row["accounting"]["known_cost_usd"],
        )
        for row in answer["rows"]
    ]
    assert rows == [
        ("v1", "09:00", "10:00", 2, "0.17"),
        ("v1", "10:00", "11:00", 2, "0.20"),
        ("v2", "10:00", "11:00", 1, "0.30"),
        ("v1", "11:00", "12:00", 2, "0.00000001"),
        ("v2", "12:00", "13:00", 1, "0.40"),
    ]
    by_day = read(client, "timeline")
    assert by_day["granularity"] == "day"
    assert [
        (row["workflow_version"], row["window_start"][:10], row["window_end"][:10])
        for row in by_day["rows"]
    ] == [("v1", "2026-03-01", "2026-03-02"), ("v2", "2026-03-01", "2026-03-02")]
    only_v2 = read(client, "timeline", workflow_version="v2")
    assert [row["workflow_version"] for row in only_v2["versions"]] == ["v2"]
    assert only_v2["totals"]["known_cost_usd"] == "0.70"


@pytest.mark.spec("§4.4 debugger-cohorts")
def test_cohorts_by_subject_and_by_dimension(client):
    load(client)
    answer = read(client, "cohorts")
    assert (answer["method_version"], answer["cohort"]) == (METHOD, "subject_id")
    rows = [
        (
            row["workflow_version"],
            row["cohort"],
            row["accounting"]["events"],
            row["accounting"]["known_cost_usd"],
            row["accounting"]["successful_runs"],
            row["accounting"]["failed_runs"],
            row["accounting"]["cost_per_successful_outcome_usd"],
            row["accounting"]["failure_rate"],
        )
        for row in answer["rows"]
    ]
    assert rows == [
        ("v1", None, 1, "0.00000001", 0, 0, None, None),  # no success, no resolved run: no ratio
        ("v1", "acct-1", 3, "0.17", 1, 0, None, "0"),  # r3's cost is unknown
        ("v1", "acct-2", 2, "0.20", 0, 1, None, "1"),
        ("v2", "acct-2", 1, "0.30", 1, 0, "0.3", "0"),
        ("v2", "acct-3", 1, "0.40", 0, 1, None, "1"),
    ]
    by_plan = read(client, "cohorts", cohort="dimension:plan")
    assert by_plan["cohort"] == "dimension:plan"
    assert [
        (row["workflow_version"], row["cohort"], row["accounting"]["events"])
        for row in by_plan["rows"]
    ] == [("v1", None, 3), ("v1", "free", 1), ("v1", "pro", 2), ("v2", None, 1), ("v2", "free", 1)]


@pytest.mark.spec("§4.4 debugger-breakage")
def test_breakage_orders_steps_by_failed_run_exposure(client):
    load(client)
    answer = read(client, "breakage", role="approver")
    assert answer["method_version"] == METHOD
    assert answer["totals"]["failure_tax_usd"] == "0.60"
    steps = [
        (
            row["workflow_version"],
            row["step_id"],
            row["accounting"]["failure_tax_usd"],
            row["accounting"]["repeated_attempt_usd"],
        )
        for row in answer["steps"]
    ]
    assert steps == [
        ("v2", "send", "0.40", "0.40"),
        ("v1", "draft", "0.20", "0.07"),
        ("v1", "review", "0", "0"),
        ("v1", None, "0", "0"),
        ("v2", "draft", "0", "0"),
    ]


@pytest.mark.spec("§4.4 debugger-report")
def test_the_report_in_json_and_markdown(client):
    load(client)
    answer = read(client, "report", granularity="hour", cohort="dimension:plan")
    assert answer["method_version"] == METHOD
    assert (answer["granularity"], answer["cohort"]) == ("hour", "dimension:plan")
    assert answer["totals"] == read(client, "timeline")["totals"]
    assert answer["timeline"] == read(client, "timeline", granularity="hour")["rows"]
    assert answer["cohorts"] == read(client, "cohorts", cohort="dimension:plan")["rows"]
    assert answer["steps"] == read(client, "breakage")["steps"]
    markdown = client.get(
        "/v1/debugger/report", params={**WINDOW, "format": "markdown"}, headers=auth("analyst")
    )
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert "method_version: `observed-accounting/1`" in markdown.text
    assert "1.07000001" in markdown.text
    assert "1 unknown-cost events; 1 runs without outcome; 1 unattributed events" in markdown.text
    as_json = client.get(
        "/v1/debugger/report", params={**WINDOW, "format": "json"}, headers=auth("analyst")
    )
    assert as_json.headers["content-type"].startswith("application/json")
    assert without_as_of(as_json.json()) == without_as_of(read(client, "report"))


@pytest.mark.spec("C6 debugger-queries")
def test_an_empty_window_answers_zeroes_and_complete(client):
    answer = read(client, "report")
    assert answer["totals"]["events"] == 0
    assert answer["totals"]["known_cost_usd"] == "0"
    assert answer["totals"]["incomplete"]["complete"] is True
    assert (answer["versions"], answer["timeline"], answer["cohorts"], answer["steps"]) == (
        [],
        [],
        [],
        [],
    )


@pytest.mark.spec("C6 evidence-ingestion")
def test_ingestion_is_idempotent_and_a_changed_replay_stores_nothing(client):
    first = post(client, "executions", EXECUTIONS[:3])
    assert first.json() == {"received": 3, "stored": 3, "replayed": 0}
    again = post(client, "executions", EXECUTIONS[:4])
    assert again.status_code == 200
    assert again.json() == {"received": 4, "stored": 1, "replayed": 3}
    # The same amount spelled in plain notation is the same event.
    assert post(client, "executions", [EXECUTIONS[5]]).json()["stored"] == 1
    plain = {**EXECUTIONS[5], "cost_usd": "0.00000001"}
    assert post(client, "executions", [plain]).json() == {"received": 1, "stored": 0, "replayed": 1}
    changed = post(client, "executions", [EXECUTIONS[6], {**EXECUTIONS[0], "cost_usd": "0.11"}])
    assert changed.status_code == 409
    assert changed.headers["content-type"].startswith("application/problem+json")
    assert changed.json()["code"] == "conflict"
    assert post(client, "executions", [EXECUTIONS[6]]).json()["stored"] == 1  # nothing was stored
    stolen = post(client, "executions", [execution("thief", "1", run_id="r9", charge_id="c-e1")])
    assert stolen.status_code == 409
    assert post(client, "outcomes", [OUTCOMES[0]]).json()["stored"] == 1
    assert post(client, "outcomes", [{**OUTCOMES[0], "value": False}]).status_code == 409
    assert post(client, "charge-revisions", REVISIONS).json()["stored"] == 1
    assert (
        post(client, "charge-revisions", [{**REVISIONS[0], "cost_usd": "0.08"}]).status_code == 409
    )
    assert post(client, "source-inventories", [INVENTORY]).json()["stored"] == 1
    assert post(client, "source-inventories", [INVENTORY]).json()["replayed"] == 1
    assert (
        post(client, "source-inventories", [{**INVENTORY, "terminal_run_ids": ["r1"]}]).status_code
        == 409
    )


def _errors(answer):
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["code"] == "validation_failed"
    return [error["loc"] for error in body["errors"]]


@pytest.mark.spec("C6 evidence-ingestion")
def test_invalid_batches_are_refused_whole(client):
    too_many = [execution(f"n{index}", "0.01", run_id="r1") for index in range(1001)]
    assert _errors(post(client, "executions", too_many))
    assert _errors(post(client, "executions", []))
    assert _errors(post(client, "executions", [{**EXECUTIONS[0], "colour": "red"}]))
    assert _errors(
        client.post(
            "/v1/evidence/executions",
            json={"events": [EXECUTIONS[0]], "more": 1},
            headers=auth("operator"),
        )
    )
    cross_field = post(
        client,
        "executions",
        [
            EXECUTIONS[0],
            {**EXECUTIONS[1], "cost_measurement": "unmeasured"},
            execution("s", "1", cost_role="summary"),
        ],
    )
    assert _errors(cross_field) == [["events", 1, "cost_measurement"]]
    assert _errors(post(client, "executions", [execution("e9", "-1")]))
    assert _errors(post(client, "executions", [execution("e9", 0.5)]))  # money is a string
    assert _errors(
        post(client, "source-inventories", [{**INVENTORY, "capture_end": "2026-02-01T00:00:00Z"}])
    ) == [["events", 0, "capture_end"]]
    assert _errors(post(client, "charge-revisions", [{**REVISIONS[0], "cost_usd": None}])) == [
        ["events", 0, "cost_usd"]
    ]
    assert _errors(post(client, "outcomes", [{**OUTCOMES[0], "value": {"nested": True}}]))
    # None of the refused batches left anything behind.
    assert post(client, "executions", EXECUTIONS[:2]).json()["stored"] == 2


@pytest.mark.spec("§2.9 outcome-definition")
def test_outcome_definitions_are_immutable_per_workflow_version(client):
    body = definition()
    created = client.post("/v1/debugger/outcome-definitions", json=body, headers=auth())
    assert created.status_code == 201
    stored = created.json()
    assert stored["digest"].startswith("sha256:")
    assert (stored["tenant_id"], stored["workflow_version"], stored["predicate"]["kind"]) == (
        "acme",
        "v1",
        "equals",
    )
    replay = client.post("/v1/debugger/outcome-definitions", json=body, headers=auth())
    assert (replay.status_code, replay.json()) == (200, stored)
    changed = client.post(
        "/v1/debugger/outcome-definitions",
        json=definition(predicate={"kind": "equals", "value": 1}),
        headers=auth(),
    )
    assert changed.status_code == 409
    assert changed.json()["code"] == "outcome_definition_immutable"
    assert (
        client.post(
            "/v1/debugger/outcome-definitions", json=definition("v2"), headers=auth()
        ).status_code
        == 201
    )
    assert (
        client.post(
            "/v1/debugger/outcome-definitions", json=body, headers=auth(tenant="globex")
        ).status_code
        == 201
    )
    assert _errors(
        client.post(
            "/v1/debugger/outcome-definitions",
            json=definition("v3", predicate={"kind": "at_least"}),
            headers=auth(),
        )
    )
    assert _errors(
        client.post("/v1/debugger/outcome-definitions", json={**body, "extra": 1}, headers=auth())
    )


@pytest.mark.spec("§5 role-rules")
def test_roles_and_permissions(client):
    assert post(client, "executions", EXECUTIONS[:1], role="operator").status_code == 200
    assert post(client, "executions", EXECUTIONS[1:2], role="admin").status_code == 200
    for role in ("viewer", "analyst", "approver"):
        assert post(client, "executions", EXECUTIONS[2:3], role=role).status_code == 403, role
    for route in ROUTES:
        for role in ("admin", "analyst", "approver"):
            answer = client.get(f"/v1/debugger/{route}", params=WINDOW, headers=auth(role))
            assert answer.status_code == 200, (route, role)
            assert answer.json()["method_version"] == METHOD
        for role in ("viewer", "operator"):
            answer = client.get(f"/v1/debugger/{route}", params=WINDOW, headers=auth(role))
            assert answer.status_code == 403, (route, role)
            assert answer.json()["code"] == "forbidden"
        assert client.get(f"/v1/debugger/{route}", params=WINDOW).status_code == 401
    for role in ("operator", "analyst", "approver", "viewer"):
        answer = client.post(
            "/v1/debugger/outcome-definitions", json=definition(), headers=auth(role)
        )
        assert answer.status_code == 403, role
    assert (
        client.post(
            "/v1/debugger/outcome-definitions", json=definition(), headers=auth("admin")
        ).status_code
        == 201
    )


@pytest.mark.spec("§2.9 evidence-tenant-boundary")
def test_a_tenant_never_sees_another_tenants_evidence(client):
    load(client)
    empty = read(client, "report", tenant="globex")
    assert empty["totals"]["events"] == 0
    assert empty["versions"] == []
    # Event and charge ids are per tenant: globex may use acme's with other content.
    assert (
        post(client, "executions", [{**EXECUTIONS[0], "cost_usd": "9"}], tenant="globex").json()[
            "stored"
        ]
        == 1
    )
    theirs = read(client, "timeline", tenant="globex")["totals"]
    assert (theirs["events"], theirs["known_cost_usd"], theirs["runs"]) == (1, "9", 1)
    assert (
        theirs["incomplete"]["unresolved_runs"] == 1
    )  # acme's outcome and definition are not globex's
    assert read(client, "timeline")["totals"]["known_cost_usd"] == "1.07000001"


@pytest.mark.spec("C6 debugger-queries")
@pytest.mark.parametrize(
    ("query", "loc"),
    [
        ({"end": WINDOW["start"]}, ["end"]),
        ({"end": "2026-02-28T00:00:00Z"}, ["end"]),
        ({"granularity": "week"}, ["query", "granularity"]),
        ({"cohort": "plan"}, ["query", "cohort"]),
        ({"cohort": "dimension:"}, ["query", "cohort"]),
        ({"start": "yesterday"}, ["query", "start"]),
        ({"start": "2026-03-01T00:00:00"}, ["query", "start"]),  # no offset: not RFC 3339
        ({"workflow_id": ""}, ["query", "workflow_id"]),
    ],
)
def test_bad_queries_are_refused(client, query, loc):
    for route in ROUTES:
        answer = client.get(
            f"/v1/debugger/{route}", params={**WINDOW, **query}, headers=auth("analyst")
        )
        # An empty window is named ["end"] by the service, the other fields ["query", name].
        assert loc in [error[-len(loc) :] for error in _errors(answer)], route


@pytest.mark.spec("C6 debugger-queries")
def test_missing_query_parameters_and_a_bad_format_are_refused(client):
    for missing in ("workflow_id", "start", "end"):
        params = {name: value for name, value in WINDOW.items() if name != missing}
        assert ["query", missing] in _errors(
            client.get("/v1/debugger/timeline", params=params, headers=auth())
        )
    bad = client.get("/v1/debugger/report", params={**WINDOW, "format": "pdf"}, headers=auth())
    assert _errors(bad) == [["query", "format"]]


@pytest.mark.spec("§7 debugger-event-limit")
def test_a_window_of_more_than_50000_execution_events_is_refused(client, fresh_database):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    copy_executions(fresh_database, 50_000, start=start)
    full = read(client, "timeline")
    assert (full["totals"]["events"], full["totals"]["known_cost_usd"]) == (50_000, "50.000")
    assert (
        post(
            client, "executions", [execution("one-more", "1", run_id="r1", version="v2")]
        ).status_code
        == 200
    )
    for route in ROUTES:
        answer = client.get(f"/v1/debugger/{route}", params=WINDOW, headers=auth("analyst"))
        assert answer.status_code == 422, route
        body = answer.json()
        assert body["code"] == "evidence_window_too_large"
        assert body["type"] == "urn:ecp:error:evidence_window_too_large"
    # A narrower window answers in full again; other tenants are not affected.
    assert read(client, "timeline", workflow_version="v2")["totals"]["events"] == 1
    assert read(client, "timeline", tenant="globex")["totals"]["events"] == 0
    # Ending the window at the last bulk event leaves it out: 49,999 bulk events and one-more.
    narrower = read(
        client,
        "timeline",
        end=(start + timedelta(seconds=49_999)).isoformat().replace("+00:00", "Z"),
    )
    assert narrower["totals"]["events"] == 50_000


_runs = itertools.count()


def completed_run(client):
    """A run of the example graph, driven to completion (as in test_http_retention)."""
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code in (200, 201)
    client.post(
        "/v1/deployments",
        json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
        headers=auth(),
    )  # 201 the first time, a conflict afterwards
    run = client.post(
        "/runs", json={"deployment_ref": "refunds", "input": {"n": next(_runs)}}, headers=auth()
    ).json()
    waiting = client.app.state.runtime.ecp.runs.drive("acme", run["run_id"])
    answer = client.post(
        f"/deployments/refunds/approvals/{waiting.pending_approval_ids[0]}/resolve",
        json={"decision": "approve"},
        headers=auth(),
    )
    assert answer.json()["run"]["status"] == "completed"
    return run["run_id"]


def erase(client, run_id):
    answer = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=auth()
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["runs"][0]["steps"][-1]


@pytest.mark.spec("§9.1 econ-erasure-join-key")
def test_erasure_deletes_the_runs_economic_events(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path, retention_econ_erase_enabled=True) as client:
        run_id, other = completed_run(client), completed_run(client)
        events = [
            execution("mine-1", "1", run_id=run_id),
            execution("mine-2", None, run_id=run_id),
            execution("theirs", "2", run_id=other),
        ]
        assert post(client, "executions", events).json()["stored"] == 3
        assert post(client, "outcomes", [outcome("mine-o", run_id, True)]).json()["stored"] == 1
        last = erase(client, run_id)
        assert (last["step"], last["status"], last["newly_erased"]) == (
            "delete_economic_events",
            "done",
            3,
        )
        totals = read(client, "timeline")["totals"]
        assert (totals["events"], totals["known_cost_usd"], totals["runs"]) == (1, "2", 1)
        # What is left is exactly the other run's event: replaying everything stores the erased ones anew.
        assert post(client, "executions", events).json() == {
            "received": 3,
            "stored": 2,
            "replayed": 1,
        }
        again = erase(client, run_id)
        assert (again["status"], again["newly_erased"]) == ("done", 2)


@pytest.mark.spec("§6.2 econ-erase-steps")
def test_erasure_skips_economic_events_unless_enabled(client):
    run_id = completed_run(client)
    assert post(client, "executions", [execution("mine", "1", run_id=run_id)]).json()["stored"] == 1
    last = erase(client, run_id)
    assert (last["step"], last["status"]) == ("econ_erase_skipped", "skipped")
    assert read(client, "timeline")["totals"]["events"] == 1


@pytest.mark.spec("§6.2 econ-erase-steps")
def test_erasure_fails_retryably_while_the_econ_schema_is_missing(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path, retention_econ_erase_enabled=True) as client:
        run_id = completed_run(client)
        assert (
            post(client, "executions", [execution("mine", "1", run_id=run_id)]).json()["stored"]
            == 1
        )
        applied = [name for name, done in migration_status(fresh_database) if done]
        evidence_schema = next(name for name in applied if name.endswith("_evidence"))
        # Roll back the evidence schema (and whatever was applied after it), then put back what
        # is not economic: only the economic schema is missing, as after a failed econ migration.
        rolled_back = rollback_migrations(
            fresh_database, len(applied) - applied.index(evidence_schema)
        )
        assert evidence_schema in rolled_back
        econ = {m.id for m in migrations() if pathlib.Path(m.path).parent.name == "econ"}
        others = [name for name in rolled_back if name not in econ]
        assert sorted(apply_migrations(fresh_database, only=others)) == sorted(others)
        try:
            failed = erase(client, run_id)
            assert (failed["step"], failed["status"], failed["newly_erased"]) == (
                "delete_economic_events",
                "failed",
                0,
            )
            assert "erase again" in json.dumps(failed["detail"])
            log = client.get("/v1/retention/audit-log?limit=500", headers=auth()).json()["entries"]
            assert any(
                entry["step"] == "delete_economic_events" and entry["status"] == "failed"
                for entry in log
            )
        finally:
            assert sorted(apply_migrations(fresh_database)) == sorted(econ & set(rolled_back))
        # The schema is back (empty, since the rollback dropped it): the retried step succeeds.
        retried = erase(client, run_id)
        assert (retried["step"], retried["status"], retried["newly_erased"]) == (
            "delete_economic_events",
            "done",
            0,
        )
