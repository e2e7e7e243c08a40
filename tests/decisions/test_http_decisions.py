"""Version decisions over HTTP on a real PostgreSQL.

Evidence is posted through the API (forty runs a version: v1 accepts half at 1.00 a run, its run
0 at 1E-8; v2 accepts all at 1.00), then compared: 201 for a new artifact, 200 with the very same
artifact for an identical request, 201 and the next revision for a changed policy or changed
evidence. History lists the artifacts newest first with their original ``calculation_inputs``
and pages with ``Link``. A running server's scheduler runs a due schedule by itself; readiness
reports the scheduler task. Concurrent comparisons are ordered at their inserts with a table
lock (the database's own locking, no stand-ins), and payloads of older writers are written
straight into the table.
"""

import base64
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import psycopg
import pytest
from psycopg.types.json import Json
from starlette.testclient import TestClient

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "d" * 40
START, END = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 11, tzinfo=UTC)
RUNS = 40
DAY = 86_400
POLICY = {"min_success_rate": 0.5}


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def parse(text):
    return datetime.fromisoformat(text)


def make_client(database, tmp_path, *, start_workers=False, **extra):
    settings = Settings(
        database_url=database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(7, 39))).decode(),
        **extra,
    )
    return TestClient(create_app(settings, start_workers=start_workers))


@pytest.fixture
def client(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path) as test_client:
        yield test_client


def auth(role="analyst", tenant="acme"):
    token = mint_token(SECRET, tenant=tenant, roles=[role], subject=f"{role}-1")
    return {"Authorization": f"Bearer {token}"}


def post_events(client, kind, events, tenant="acme"):
    answer = client.post(
        f"/v1/evidence/{kind}", json={"events": events}, headers=auth("operator", tenant)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def load(client, *, at=START, tenant="acme"):
    """Both versions' runs from ``at``, one a minute, and one outcome rule for both versions."""
    for version in ("v1", "v2"):
        rule = {
            "workflow_id": "claims",
            "workflow_version": version,
            "outcome_type": "done",
            "predicate": {"kind": "equals", "value": True},
        }
        answer = client.post(
            "/v1/debugger/outcome-definitions", json=rule, headers=auth("admin", tenant)
        )
        assert answer.status_code == 201, answer.text
        events, outcomes = [], []
        for i in range(RUNS):
            run = f"{version}-r{i:03d}"
            events.append(
                {
                    "event_id": f"{version}-e{i:03d}",
                    "workflow_id": "claims",
                    "workflow_version": version,
                    "run_id": run,
                    "occurred_at": iso(at + timedelta(minutes=i)),
                    "cost_usd": "1E-8" if (version, i) == ("v1", 0) else "1.00",
                    "cost_measurement": "measured",
                    "charge_id": f"{version}-c{i:03d}",
                }
            )
            outcomes.append(
                {
                    "event_id": f"{version}-o{i:03d}",
                    "workflow_id": "claims",
                    "workflow_version": version,
                    "run_id": run,
                    "outcome_type": "done",
                    "asserted_at": iso(at + timedelta(hours=1)),
                    "value": version == "v2" or i % 2 == 0,
                }
            )
        post_events(client, "executions", events, tenant)
        post_events(client, "outcomes", outcomes, tenant)


def body(**fields):
    return {
        "workflow_id": "claims",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": iso(START),
        "end": iso(END),
        "policy": POLICY,
    } | fields


def compare(client, role="analyst", tenant="acme", **fields):
    return client.post("/v1/decisions/compare", json=body(**fields), headers=auth(role, tenant))


def schedule_body(**fields):
    return {
        "workflow_id": "claims",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "interval_seconds": DAY,
        "window_seconds": 7 * DAY,
        "policy": POLICY,
        "name": "nightly",
    } | fields


def history(client, role="analyst", tenant="acme", **query):
    answer = client.get("/v1/decisions", params=query, headers=auth(role, tenant))
    assert answer.status_code == 200, answer.text
    return answer


def errors(answer):
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["code"] == "validation_failed"
    return [error["loc"] for error in problem["errors"]]


# --- comparisons and their revisions ---------------------------------------------------------


@pytest.mark.spec("§4.4 decision-revisions")
def test_a_comparison_is_retained_and_an_identical_request_returns_it(client):
    load(client)
    first = compare(client)
    assert first.status_code == 201, first.text
    artifact = first.json()
    assert (artifact["verdict"], artifact["recommended_action"]) == ("pass", "review_candidate")
    assert (artifact["claim_class"], artifact["method_version"]) == (
        "observed_comparison",
        "interval-policy/1",
    )
    assert (
        artifact["revision"],
        artifact["tenant_id"],
        artifact["requested_by"],
        artifact["schedule_id"],
    ) == (1, "acme", "analyst-1", None)
    assert artifact["policy"]["confidence_level"] == 0.95
    assert artifact["source_evidence"]["fingerprint"].startswith("sha256:")
    inputs = artifact["calculation_inputs"]
    assert inputs["version"] == "run-economics/1"
    assert sum(row["runs"] for row in inputs["baseline"]) == RUNS
    assert [Decimal(row["cost_usd"]) for row in inputs["baseline"] if row["runs"] == 1] == [
        Decimal("1E-8")
    ]
    assert {(row["cost_usd"], row["accepted"], row["runs"]) for row in inputs["candidate"]} == {
        ("1.00", True, RUNS)
    }

    again = compare(client)
    assert again.status_code == 200
    assert again.json() == artifact
    # The same request spelt another way: defaults written out, another UTC offset spelling.
    spelt = compare(
        client,
        start="2026-11-01T00:00:00+00:00",
        policy={**POLICY, "confidence_level": 0.95, "max_cost_growth": 0.1},
    )
    assert (spelt.status_code, spelt.json()) == (200, artifact)

    stricter = compare(client, role="admin", policy={**POLICY, "confidence_level": 0.99})
    assert stricter.status_code == 201
    revised = stricter.json()
    assert revised["revision"] == 2
    assert revised["decision_id"] != artifact["decision_id"]
    assert revised["policy"]["confidence_level"] == 0.99
    assert revised["source_evidence"] == artifact["source_evidence"]

    # Changed evidence: an outcome assertion turning a failed baseline run into an accepted one.
    post_events(
        client,
        "outcomes",
        [
            {
                "event_id": "v1-late",
                "workflow_id": "claims",
                "workflow_version": "v1",
                "run_id": "v1-r001",
                "outcome_type": "done",
                "asserted_at": iso(START + timedelta(days=2)),
                "value": True,
            }
        ],
    )
    newer = compare(client)
    assert newer.status_code == 201
    assert newer.json()["revision"] == 3
    assert newer.json()["source_evidence"] != artifact["source_evidence"]
    assert newer.json()["calculation_inputs"] != artifact["calculation_inputs"]
    assert compare(client).json() == newer.json()  # ... and that one is retained in turn


@pytest.mark.spec("§4.4 decision-history", "C7 link-header")
def test_history_lists_newest_first_with_the_original_inputs_and_pages_with_link(client):
    load(client)
    made = [
        compare(client, policy={**POLICY, "confidence_level": level}).json()
        for level in (0.8, 0.9, 0.95)
    ]
    post_events(
        client,
        "executions",
        [
            {
                "event_id": "v2-extra",
                "workflow_id": "claims",
                "workflow_version": "v2",
                "run_id": "v2-r000",
                "occurred_at": iso(START + timedelta(hours=5)),
                "cost_usd": "9.00",
                "cost_measurement": "measured",
                "charge_id": "v2-extra",
            }
        ],
    )
    made.append(compare(client, policy={**POLICY, "confidence_level": 0.8}).json())
    assert [a["revision"] for a in made] == [1, 2, 3, 4]
    newest = list(reversed(made))

    first = history(client, limit=3)
    page = first.json()
    assert page["decisions"] == newest[:3]  # whole artifacts, exactly as first answered
    assert page["next_cursor"]
    link = first.headers["Link"]
    assert link.endswith('>; rel="next"')
    target = urllib.parse.urlsplit(link[1 : link.index(">")])
    assert target.path == "/v1/decisions"
    query = dict(urllib.parse.parse_qsl(target.query))
    assert query == {"limit": "3", "cursor": page["next_cursor"]}
    second = client.get(f"{target.path}?{target.query}", headers=auth("approver"))
    assert second.status_code == 200
    assert second.json() == {"decisions": newest[3:], "next_cursor": None}
    assert "Link" not in second.headers
    # The first artifact kept its inputs though the evidence changed after it.
    assert second.json()["decisions"][0]["calculation_inputs"] == made[0]["calculation_inputs"]
    assert made[3]["calculation_inputs"] != made[0]["calculation_inputs"]

    assert history(client, workflow_id="claims").json()["decisions"] == newest
    assert history(client, workflow_id="other").json() == {"decisions": [], "next_cursor": None}
    assert history(client, tenant="globex").json()["decisions"] == []
    assert errors(client.get("/v1/decisions", params={"cursor": "forged"}, headers=auth()))
    assert client.get("/v1/decisions", params={"limit": 0}, headers=auth()).status_code == 422


@pytest.mark.spec("§2.9 evidence-tenant-boundary")
def test_another_tenant_compares_its_own_evidence(client):
    load(client)
    ours = compare(client).json()
    theirs = compare(client, tenant="globex")
    assert theirs.status_code == 201
    assert theirs.json()["revision"] == 1
    assert theirs.json()["verdict"] == "abstain"
    assert theirs.json()["source_delivery"]["candidate"]["runs"] == 0
    assert theirs.json()["decision_id"] != ours["decision_id"]
    assert [a["decision_id"] for a in history(client).json()["decisions"]] == [ours["decision_id"]]


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"end": iso(START)}, ["end"]),
        ({"end": iso(START - timedelta(seconds=1))}, ["end"]),
        ({"colour": "red"}, ["colour"]),
        ({"policy": {**POLICY, "colour": "red"}}, ["policy", "colour"]),
        ({"policy": {**POLICY, "confidence_level": 0}}, ["policy", "confidence_level"]),
        ({"policy": {**POLICY, "confidence_level": 1}}, ["policy", "confidence_level"]),
        ({"policy": {**POLICY, "confidence_level": 1.5}}, ["policy", "confidence_level"]),
        ({"policy": {**POLICY, "confidence_level": "0.9"}}, ["policy", "confidence_level"]),
        (
            {"baseline_inventory_id": "nope", "candidate_inventory_id": "nope"},
            ["baseline_inventory_id"],
        ),
    ],
    ids=[
        "end-equals-start",
        "end-before-start",
        "unknown-property",
        "unknown-policy-property",
        "confidence-0",
        "confidence-1",
        "confidence-1.5",
        "confidence-string",
        "unknown-inventory",
    ],
)
def test_invalid_comparisons_are_refused(client, fields, loc):
    load(client)
    assert loc in errors(compare(client, **fields))
    assert history(client).json()["decisions"] == []  # nothing was retained


@pytest.mark.spec("§4.4 decision-schedules")
@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"interval_seconds": DAY - 1}, ["interval_seconds"]),
        ({"interval_seconds": 3600}, ["interval_seconds"]),
        ({"window_seconds": 3599}, ["window_seconds"]),
        ({"colour": "red"}, ["colour"]),
        ({"policy": {**POLICY, "confidence_level": 1}}, ["policy", "confidence_level"]),
    ],
    ids=[
        "interval-a-second-short",
        "interval-hourly",
        "window-short",
        "unknown-property",
        "confidence-1",
    ],
)
def test_invalid_schedules_are_refused(client, fields, loc):
    answer = client.post("/v1/decision-schedules", json=schedule_body(**fields), headers=auth())
    assert loc in errors(answer)
    assert client.get("/v1/decision-schedules", headers=auth()).json() == {"schedules": []}


@pytest.mark.spec("C2 permission-table")
def test_roles_and_permissions(client):
    load(client)
    for role in ("admin", "analyst"):
        assert compare(client, role=role).status_code in (200, 201), role
        answer = client.post("/v1/decision-schedules", json=schedule_body(), headers=auth(role))
        assert answer.status_code == 201, role
    for role in ("approver", "viewer", "operator"):
        answer = compare(client, role=role, policy={"min_success_rate": 0.1})
        assert answer.status_code == 403, role
        assert answer.json()["code"] == "forbidden"
        answer = client.post("/v1/decision-schedules", json=schedule_body(), headers=auth(role))
        assert answer.status_code == 403, role
    for role in ("admin", "analyst", "approver"):
        assert len(history(client, role=role).json()["decisions"]) == 1, role
        answer = client.get("/v1/decision-schedules", headers=auth(role))
        assert answer.status_code == 200, role
        assert len(answer.json()["schedules"]) == 2
    for role in ("viewer", "operator"):
        assert client.get("/v1/decisions", headers=auth(role)).status_code == 403, role
        assert client.get("/v1/decision-schedules", headers=auth(role)).status_code == 403, role
    assert client.post("/v1/decisions/compare", json=body()).status_code == 401
    assert client.get("/v1/decisions").status_code == 401
    assert client.post("/v1/decision-schedules", json=schedule_body()).status_code == 401
    assert client.get("/v1/decision-schedules").status_code == 401
    # The refused comparison was not retained.
    assert len(history(client).json()["decisions"]) == 1


# --- schedules -------------------------------------------------------------------------------


@pytest.mark.spec("§4.4 decision-schedules")
def test_schedules_are_created_and_listed_per_tenant_oldest_first(client):
    before = datetime.now(UTC)
    first = client.post("/v1/decision-schedules", json=schedule_body(), headers=auth())
    assert first.status_code == 201, first.text
    made = first.json()
    assert (made["tenant_id"], made["created_by"], made["name"]) == ("acme", "analyst-1", "nightly")
    assert (made["interval_seconds"], made["window_seconds"]) == (DAY, 7 * DAY)
    assert made["policy"] == {
        "min_success_rate": 0.5,
        "confidence_level": 0.95,
        "max_cost_growth": 0.1,
        "max_success_rate_drop": 0.0,
        "min_runs": 30,
        "min_outcome_coverage": 0.9,
        "allow_estimated_cost": False,
    }
    # The first occurrence is due at once.
    assert before <= parse(made["next_run_at"]) == parse(made["created_at"]) <= datetime.now(UTC)
    assert (made["last_run_at"], made["last_decision_id"], made["last_error"]) == (None, None, None)
    second = client.post(
        "/v1/decision-schedules",
        headers=auth("admin"),
        json=schedule_body(name=None, candidate_version="v1", interval_seconds=7 * DAY),
    ).json()
    client.post("/v1/decision-schedules", json=schedule_body(), headers=auth(tenant="globex"))
    listed = client.get("/v1/decision-schedules", headers=auth("approver")).json()["schedules"]
    assert listed == [made, second]
    assert second["name"] is None
    assert (
        len(client.get("/v1/decision-schedules", headers=auth(tenant="globex")).json()["schedules"])
        == 1
    )


def poll(read, done, *, seconds=30.0):
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"gave up waiting; last seen {value}"
        time.sleep(0.05)


@pytest.mark.spec("§9.1 schedule-claims")
def test_the_running_servers_scheduler_runs_a_due_schedule_once(fresh_database, tmp_path):
    with make_client(
        fresh_database, tmp_path, start_workers=True, scheduler_interval_seconds=0.1
    ) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["scheduler"] == "running"
        load(client, at=datetime.now(UTC) - timedelta(days=2))
        made = client.post("/v1/decision-schedules", json=schedule_body(), headers=auth()).json()

        def schedules():
            return client.get("/v1/decision-schedules", headers=auth()).json()["schedules"]

        (ran,) = poll(schedules, lambda found: found[0]["last_decision_id"] is not None)
        assert ran["last_error"] is None
        # The claimed occurrence was moved on by exactly one interval.
        assert parse(ran["next_run_at"]) == parse(made["next_run_at"]) + timedelta(seconds=DAY)
        (artifact,) = history(client, role="approver").json()["decisions"]
        assert artifact["decision_id"] == ran["last_decision_id"]
        assert artifact["schedule_id"] == made["schedule_id"]
        assert artifact["requested_by"] == f"schedule:{made['schedule_id']}"
        assert (artifact["verdict"], artifact["method_version"]) == ("pass", "interval-policy/1")
        assert parse(artifact["end"]) == parse(ran["last_run_at"])
        assert parse(artifact["end"]) - parse(artifact["start"]) == timedelta(days=7)
        assert sum(row["runs"] for row in artifact["calculation_inputs"]["candidate"]) == RUNS
        # Further sweeps find nothing due: the occurrence ran once.
        time.sleep(1.0)
        assert [a["decision_id"] for a in history(client).json()["decisions"]] == [
            artifact["decision_id"]
        ]
        assert schedules() == [ran]


@pytest.mark.spec("§4.5 readiness")
def test_readiness_reports_the_scheduler_task(fresh_database, tmp_path):
    with make_client(fresh_database, tmp_path, start_workers=True) as client:
        ready = client.get("/health/ready")
        assert (ready.status_code, ready.json()["status"]) == (200, "ready")
        assert ready.json()["checks"]["scheduler"] == "running"
        client.app.state.runtime.scheduler.stop()  # the task dies; the server still serves
        degraded = client.get("/health/ready")
        assert degraded.status_code == 503
        assert degraded.json()["status"] == "degraded"
        assert degraded.json()["checks"]["scheduler"] == "stopped"
        assert degraded.json()["checks"]["schema"] == "current"
    with make_client(
        fresh_database, tmp_path, start_workers=True, scheduler_enabled=False
    ) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 200
        assert ready.json()["checks"]["scheduler"] == "disabled"


# --- concurrent comparisons ------------------------------------------------------------------


def _inserts_waiting(database):
    with psycopg.connect(database, autocommit=True) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND (query LIKE 'INSERT INTO ecp_decisions %'"
            " OR query LIKE 'SELECT pg_advisory_xact_lock%')"
        ).fetchone()
        return count


def racing(client, database, bodies):
    """Post the comparisons at once, held just before their inserts until all have got there.

    A table lock that lets reads through but not inserts is held while the requests run; the
    first request reads its evidence and the history and waits at its insert, the others wait
    for the comparison's subject lock it holds. The table lock is released once every request
    waits: the worst interleaving, made certain.
    """
    with psycopg.connect(database) as holder:
        holder.execute("LOCK TABLE ecp_decisions IN SHARE MODE")
        with ThreadPoolExecutor(len(bodies)) as pool:
            futures = [
                pool.submit(client.post, "/v1/decisions/compare", json=item, headers=auth())
                for item in bodies
            ]
            poll(lambda: _inserts_waiting(database), lambda count: count == len(bodies))
            holder.commit()
            return [future.result(timeout=60) for future in futures]


@pytest.mark.spec("§4.4 decision-revisions")
def test_identical_comparisons_at_once_answer_with_one_retained_artifact(client, fresh_database):
    load(client)
    answers = racing(client, fresh_database, [body(), body()])
    assert sorted(answer.status_code for answer in answers) == [200, 201], [
        answer.text for answer in answers
    ]
    assert answers[0].json() == answers[1].json()
    assert len(history(client).json()["decisions"]) == 1


@pytest.mark.spec("§4.4 decision-revisions")
def test_concurrent_comparisons_of_one_subject_take_distinct_revisions(client, fresh_database):
    load(client)
    assert compare(client).status_code == 201
    answers = racing(
        client,
        fresh_database,
        [body(policy={**POLICY, "confidence_level": level}) for level in (0.9, 0.99)],
    )
    assert [answer.status_code for answer in answers] == [201, 201]
    assert sorted(answer.json()["revision"] for answer in answers) == [2, 3]


# --- retained payloads of older writers ------------------------------------------------------


def store_legacy(database, artifact, *without):
    """Write ``artifact`` back as an older writer stored it: the same row, fields missing."""
    payload = {key: value for key, value in artifact.items() if key not in without}
    payload["decision_id"] = f"{artifact['decision_id']}-legacy"
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO ecp_decisions (tenant_id, decision_id, workflow_id, baseline_version,"
            " candidate_version, start_at, end_at, request_digest, fingerprint, created_at,"
            " artifact) SELECT tenant_id, %s, workflow_id, baseline_version, candidate_version,"
            " start_at, end_at, 'legacy:' || request_digest, fingerprint,"
            " created_at - interval '1 day', %s FROM ecp_decisions WHERE decision_id = %s",
            (payload["decision_id"], Json(payload), artifact["decision_id"]),
        )
    return payload["decision_id"]


@pytest.mark.spec("§9 historical-reports")
def test_a_retained_payload_without_calculation_inputs_reads_them_as_null(client, fresh_database):
    load(client)
    artifact = compare(client).json()
    legacy = store_legacy(fresh_database, artifact, "calculation_inputs")
    current, old = history(client).json()["decisions"]
    assert current == artifact
    assert old["decision_id"] == legacy
    assert old["calculation_inputs"] is None
    assert old["source_evidence"] == artifact["source_evidence"]


@pytest.mark.spec("§9 method-versions")
def test_retained_payloads_without_claim_or_method_read_as_legacy(client, fresh_database):
    load(client)
    artifact = compare(client).json()
    legacy = store_legacy(fresh_database, artifact, "claim_class", "method_version")
    answer = client.get("/v1/decisions", headers=auth())
    assert answer.status_code == 200, answer.text
    current, old = answer.json()["decisions"]
    assert current == artifact
    assert old["decision_id"] == legacy
    assert (old["claim_class"], old["method_version"]) == (
        "legacy_unclassified",
        "legacy_unversioned",
    )
