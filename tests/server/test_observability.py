"""Request ids, JSON log lines, the one log of an unexpected error, and ``/metrics``.

Everything goes through the ASGI app on a fresh database; log lines are captured from the
handler :func:`ecp_http.logs.configure` installs, written to a string instead of stderr.
"""

import base64
import io
import json
import logging
import re
import time
from collections.abc import Iterator

import psycopg
import pytest
from openapi_spec_validator import validate
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http import logs
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "o" * 40
TENANT = "tenant-secret-xyz"
FAMILIES = {
    "ecp_http_requests",
    "ecp_http_request_duration_seconds",
    "ecp_runs_started",
    "ecp_runs_finished",
    "ecp_dispatch_queue_depth",
    "ecp_dispatch_oldest_pending_seconds",
    "ecp_webhook_deliveries",
    "ecp_webhook_outbox_depth",
    "ecp_tasks_waiting",
    "ecp_timers_waiting",
    "ecp_timers_overdue_seconds",
    "ecp_timer_lateness_seconds",
    "ecp_audit_records_appended",
    "ecp_long_poll_wakeups",
    "ecp_long_polls_waiting",
}
RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def settings(database, **changes) -> Settings:
    return Settings(
        database_url=database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(40, 72))).decode(),
        scheduler_enabled=False,
        **changes,
    )


def auth(tenant=TENANT, role="admin"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


@pytest.fixture
def lines() -> Iterator:
    """The JSON log lines written so far (a function returning the parsed list)."""
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = logs.configure("json", "INFO", stream)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture
def client(fresh_database) -> Iterator[TestClient]:
    with TestClient(create_app(settings(fresh_database), start_workers=False)) as test_client:
        yield test_client


def deploy(client, tenant=TENANT):
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth(tenant)).status_code == 201
    body = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
    assert client.post("/v1/deployments", json=body, headers=auth(tenant)).status_code == 201


def start_run(client, tenant=TENANT) -> str:
    started = client.post(
        "/runs", json={"deployment_ref": "refunds", "input": {"order": "A-1"}}, headers=auth(tenant)
    )
    assert started.status_code == 201, started.text
    return started.json()["run_id"]


def wait_for(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
    return found


def families(text: str) -> dict:
    return {family.name: family for family in text_string_to_metric_families(text)}


def sample(found: dict, family: str, suffix: str = "_total", **labels) -> float:
    for s in found[family].samples:
        if s.name == family + suffix and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError(f"no sample {family}{suffix} {labels}")


# Request ids ------------------------------------------------------------------------------


@pytest.mark.spec("C7 request-id")
def test_a_request_id_is_made_when_the_client_sends_none(client):
    first = client.get("/health/live")
    second = client.get("/health/live")
    assert re.fullmatch(r"[0-9a-f]{32}", first.headers["x-request-id"])
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


@pytest.mark.spec("C7 request-id")
@pytest.mark.parametrize("sane", ["abc", "req-1.2:3_4", "A" * 128])
def test_a_sane_client_request_id_is_kept(client, sane):
    assert (
        client.get("/health/live", headers={"X-Request-Id": sane}).headers["x-request-id"] == sane
    )


@pytest.mark.spec("C7 request-id")
@pytest.mark.parametrize("insane", ["", "has space", "A" * 129, "semi;colon", "caf\u00e9"])
def test_an_insane_client_request_id_is_replaced(client, insane):
    header = {"X-Request-Id": insane.encode("utf-8")}
    answered = client.get("/health/live", headers=header).headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", answered)


@pytest.mark.spec("C7 request-id")
@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/no/such/path", 404), ("DELETE", "/health/live", 405), ("GET", "/admin/runs", 401)],
)
def test_problems_carry_the_request_id_as_instance(client, method, path, status):
    answered = client.request(method, path, headers={"X-Request-Id": "trace-me"})
    assert answered.status_code == status
    assert answered.headers["x-request-id"] == "trace-me"
    assert answered.json()["instance"] == "urn:ecp:request:trace-me"


# Log lines --------------------------------------------------------------------------------


@pytest.mark.spec("C8 json-logs", "C7 request-id")
def test_request_lines_are_json_with_the_contract_keys(client, lines):
    client.get("/health/live", headers={"X-Request-Id": "line-1"})
    (line,) = [x for x in lines() if x.get("request_id") == "line-1"]
    assert RFC3339_UTC.fullmatch(line["ts"])
    assert (line["level"], line["event"]) == ("info", "http request")
    assert (line["route"], line["status"], line["method"]) == ("/health/live", 200, "GET")


@pytest.mark.spec("C8 json-logs")
def test_log_settings_are_checked():
    assert Settings.from_mapping({"ECP_LOG_FORMAT": "JSON"}).log_format == "json"
    assert Settings.from_mapping({"ECP_LOG_LEVEL": "warning"}).log_level == "WARNING"
    assert Settings.from_mapping({}).log_format is None
    with pytest.raises(SettingsError, match="ECP_LOG_FORMAT"):
        Settings.from_mapping({"ECP_LOG_FORMAT": "xml"})
    with pytest.raises(SettingsError, match="ECP_LOG_LEVEL"):
        Settings.from_mapping({"ECP_LOG_LEVEL": "loud"})


@pytest.mark.spec("C8 json-logs")
def test_console_format_on_a_terminal_json_otherwise():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert logs.default_format(Terminal()) == "console"
    assert logs.default_format(io.StringIO()) == "json"


@pytest.mark.spec("C8 json-logs")
def test_uvicorns_colour_copy_of_a_message_stays_out_of_json_lines():
    record = logging.LogRecord("uvicorn.error", logging.INFO, "", 0, "Finished %d", (7,), None)
    record.color_message = "Finished \x1b[36m%d\x1b[0m"
    line = json.loads(logs.JsonFormatter().format(record))
    assert line["event"] == "Finished 7"
    assert "color_message" not in line


@pytest.mark.spec("C8 json-logs")
def test_lines_below_the_level_are_not_written(fresh_database):
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = logs.configure("json", "WARNING", stream)
    try:
        app = create_app(settings(fresh_database), start_workers=False)
        with TestClient(app) as quiet:
            quiet.get("/health/live")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert "http request" not in stream.getvalue()


@pytest.mark.spec("C8 json-logs", "C7 request-id")
def test_an_unexpected_error_is_logged_once_with_its_request_id(client, lines, fresh_database):
    deploy(client)
    run_id = start_run(client)
    # A table gone: a genuine failure nothing expects (a database away is a 503, ADR 0021).
    with psycopg.connect(fresh_database, autocommit=True) as admin:
        admin.execute("DROP TABLE ecp_runs CASCADE")
    answered = client.get(f"/runs/{run_id}", headers={**auth(), "X-Request-Id": "boom-1"})
    assert answered.status_code == 500
    assert answered.headers["content-type"].startswith("application/problem+json")
    assert answered.headers["x-request-id"] == "boom-1"
    body = answered.json()
    assert (body["code"], body["instance"]) == ("internal_error", "urn:ecp:request:boom-1")
    assert "Traceback" not in answered.text
    errors = [x for x in lines() if x["level"] == "error"]
    assert len(errors) == 1
    (error,) = errors
    assert (error["event"], error["request_id"]) == ("unhandled error", "boom-1")
    assert "Traceback" in error["traceback"]
    access = [
        x for x in lines() if x.get("request_id") == "boom-1" and x["event"] == "http request"
    ]
    assert [x["status"] for x in access] == [500]


# Metrics ----------------------------------------------------------------------------------


@pytest.mark.spec("C8 metrics")
def test_metrics_have_every_family_and_no_tenant_data(client):
    deploy(client)
    run_id = start_run(client)
    assert client.get(f"/runs/{run_id}", headers=auth()).status_code == 200
    client.get(f"/no/such/{TENANT}")
    scraped = client.get("/metrics")
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    text = scraped.text
    found = families(text)
    assert set(found) >= FAMILIES
    assert TENANT not in text
    assert run_id not in text
    assert (
        sample(found, "ecp_http_requests", method="GET", route="/runs/{run_id}", status="200") == 1
    )
    assert sample(found, "ecp_http_requests", method="GET", route="unmatched", status="404") == 1
    assert sample(found, "ecp_dispatch_queue_depth", "") == 1
    assert sample(found, "ecp_dispatch_oldest_pending_seconds", "") >= 0
    assert sample(found, "ecp_tasks_waiting", "") == 0
    assert sample(found, "ecp_timers_waiting", "") == 0
    assert sample(found, "ecp_timers_overdue_seconds", "") == 0
    histogram = [
        s
        for s in found["ecp_http_request_duration_seconds"].samples
        if s.labels.get("route") == "/runs/{run_id}" and s.name.endswith("_count")
    ]
    assert [s.value for s in histogram] == [1]


@pytest.mark.spec("C8 metrics")
def test_the_metrics_token_guards_the_scrape(fresh_database):
    guarded = settings(fresh_database, metrics_token="scrape-secret")
    with TestClient(create_app(guarded, start_workers=False)) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, auth()):
            refused = client.get("/metrics", headers=headers)
            assert refused.status_code == 401
            assert refused.json()["code"] == "unauthenticated"
        allowed = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert allowed.status_code == 200
        assert "ecp_http_requests_total" in allowed.text


@pytest.mark.spec("C8 metrics")
def test_metrics_can_be_switched_off(fresh_database):
    with TestClient(
        create_app(settings(fresh_database, metrics_enabled=False), start_workers=False)
    ) as client:
        assert client.get("/metrics").status_code == 404
        assert "/metrics" not in client.get("/openapi.json").json()["paths"]


@pytest.mark.spec("C8 metrics")
def test_metrics_are_in_the_openapi_document(client):
    document = client.get("/openapi.json").json()
    validate(document)
    operation = document["paths"]["/metrics"]["get"]
    assert operation["security"] == []
    assert "text/plain; version=0.0.4; charset=utf-8" in operation["responses"]["200"]["content"]


@pytest.mark.spec("C8 metrics")
def test_two_apps_keep_their_own_figures(fresh_database, client):
    with TestClient(create_app(settings(fresh_database), start_workers=False)) as other:
        other.get("/health/live")
        other.get("/health/live")
    found = families(client.get("/metrics").text)
    assert all(s.labels.get("route") != "/health/live" for s in found["ecp_http_requests"].samples)


# Background work --------------------------------------------------------------------------


@pytest.mark.spec("C8 json-logs", "C8 metrics")
def test_background_work_is_logged_and_counted(fresh_database, lines):
    background = settings(
        fresh_database,
        # Starting the run wakes the dispatcher; nothing wakes it after the approval, so the
        # run ends in the resolving request (not in a dispatcher that polled first).
        dispatch_poll_seconds=30,
        webhook_poll_seconds=0.02,
        webhook_max_attempts=2,
        webhook_backoff_base_seconds=0.01,
        webhook_backoff_max_seconds=0.02,
        webhook_allow_private_targets=True,
    )
    with receiver(default=500) as hook, TestClient(create_app(background)) as client:
        deploy(client)
        subscription = {
            "deployment_ref": "refunds",
            "target_url": hook.url,
            "event_types": ["run.started"],
        }
        assert (
            client.post("/webhooks/subscriptions", json=subscription, headers=auth()).status_code
            == 201
        )
        run_id = start_run(client)

        def line(event, **facts):
            return next(
                (
                    x
                    for x in lines()
                    if x["event"] == event and all(x.get(k) == v for k, v in facts.items())
                ),
                None,
            )

        dispatched = wait_for(
            lambda: line("run dispatched", run_id=run_id, status="waiting_approval")
        )
        assert dispatched["tenant_id"] == TENANT
        assert line("run started", run_id=run_id, tenant_id=TENANT)
        retry = wait_for(lambda: line("webhook retry", attempt=1))
        dead = wait_for(lambda: line("webhook dead letter", attempt=2))
        assert retry["delivery_id"] == dead["delivery_id"]
        assert (retry["tenant_id"], retry["status_code"]) == (TENANT, 500)
        approval_id = client.get(f"/runs/{run_id}", headers=auth()).json()["pending_approval_ids"][
            0
        ]
        # The run ends inside this request, in a worker thread: its line carries the request id.
        resolved = client.post(
            f"/deployments/refunds/approvals/{approval_id}/resolve",
            json={"decision": "approve"},
            headers={**auth(role="approver"), "X-Request-Id": "approve-1"},
        )
        assert resolved.status_code == 200, resolved.text
        finished = line("run finished", run_id=run_id)
        assert (finished["status"], finished["request_id"]) == ("completed", "approve-1")
        found = families(client.get("/metrics").text)
    assert sample(found, "ecp_runs_started") == 1
    assert sample(found, "ecp_runs_finished", status="completed") == 1
    assert sample(found, "ecp_webhook_deliveries", result="retry") == 1
    assert sample(found, "ecp_webhook_deliveries", result="dead") == 1
    assert sample(found, "ecp_audit_records_appended") >= 2
    assert sample(found, "ecp_webhook_outbox_depth", "") == 0


NAP = {
    "graph_id": "nap",
    "entry": "nap",
    "nodes": [{"id": "nap", "kind": "wait", "seconds": 1}, {"id": "done", "kind": "end"}],
    "edges": [{"source": "nap", "target": "done"}],
}


@pytest.mark.spec("C8 json-logs", "C8 metrics", "C14 timer")
def test_a_woken_timer_is_logged_and_counted(fresh_database, lines):
    timers = settings(fresh_database, timer_poll_seconds=0.05)
    with TestClient(create_app(timers)) as client:
        assert client.post("/v1/graphs", json=NAP, headers=auth()).status_code == 201
        body = {"deployment_ref": "nap", "graph_id": "nap"}
        assert client.post("/v1/deployments", json=body, headers=auth()).status_code == 201
        started = client.post(
            "/runs", json={"deployment_ref": "nap"}, headers={**auth(), "Prefer": "wait=10"}
        )
        assert started.json()["status"] == "waiting_timer", started.text
        run_id = started.json()["run_id"]
        waiting = families(client.get("/metrics").text)
        assert sample(waiting, "ecp_timers_waiting", "") == 1

        woke = wait_for(
            lambda: next(
                (x for x in lines() if x["event"] == "run woke" and x.get("run_id") == run_id),
                None,
            )
        )
        assert woke["tenant_id"] == TENANT
        assert woke["late_seconds"] >= 0
        found = families(client.get("/metrics").text)
    assert sample(found, "ecp_timer_lateness_seconds", "_count") == 1
    assert sample(found, "ecp_timers_waiting", "") == 0
    assert sample(found, "ecp_timers_overdue_seconds", "") == 0
