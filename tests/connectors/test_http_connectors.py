"""Connectors over HTTP: settings-defined and stored ones, secrets never echoed, and cost-capped
tests against the loopback stand-in provider and a loopback HTTP endpoint (ADR 0044)."""

import pytest
from starlette.testclient import TestClient
from tests.support.connectors import (
    DEFAULT_ANSWER_COST,
    STATUS_SECRET,
    WORST_CASE,
    auth,
    environment,
    settings,
    standin,
)
from tests.support.receiver import receiver

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.outbound.model_calls.standin import Reply
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

MODEL = {"ref": "my-model", "backend_type": "model", "params": {"model_ref": "fast"}}


def honest(body):
    """A provider that keeps to max_tokens, as real ones do: 10 input, at most 5 output tokens."""
    return Reply("OK", input_tokens=10, output_tokens=min(5, body["max_tokens"]))


@pytest.fixture
def world(tmp_path):
    with standin() as models, receiver() as endpoint:
        base = endpoint.url.removesuffix("/hook")
        models.respond("fast", honest)
        app = create_app(settings(tmp_path, models.url), storage=MemoryStore())
        with TestClient(app) as client:
            yield client, models, endpoint, base


def problem(answer, status, code):
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == code
    return answer.json()


def run_test(client, ref, role="operator", tenant="acme", **body):
    fields = {"campaign_id": "c1", "operation_id": "op-1", "max_cost_usd": 1, **body}
    return client.post(f"/v1/connectors/{ref}/test", json=fields, headers=auth(role, tenant))


def costs(client, run_id=None, campaign_id="c1"):
    query = {"campaign_id": campaign_id, **({} if run_id is None else {"run_id": run_id})}
    answer = client.get("/v1/connector-costs", params=query, headers=auth("operator"))
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.spec("§2.6 connector-resources")
def test_create_list_update_delete_with_env_and_api_sources(world):
    client, _, _, _ = world
    listed = client.get("/v1/connectors", headers=auth("operator")).json()
    assert [(c["ref"], c["source"], c["scope"]) for c in listed["connectors"]] == [
        ("env-model", "env", "global"),
        ("env-status", "env", "global"),
    ]
    assert listed["connectors"][1]["params"]["timeout_seconds"] == 2.5
    created = client.post("/v1/connectors", json=MODEL, headers=auth())
    assert created.status_code == 201, created.text
    assert created.headers["Location"] == "/v1/connectors/my-model"
    assert created.json() == {
        "ref": "my-model",
        "connector_type": "model",
        "scope": "tenant",
        "backend": "openai:fast",
        "backend_type": "model",
        "params": {"model_ref": "fast"},
        "source": "api",
    }
    problem(client.post("/v1/connectors", json=MODEL, headers=auth()), 409, "conflict")
    taken = {**MODEL, "ref": "env-model"}
    problem(
        client.post("/v1/connectors", json=taken, headers=auth()), 409, "connector_settings_defined"
    )
    update = {"backend_type": "http", "params": {"base_url": "https://api.example.com"}}
    for attempt in (
        client.put("/v1/connectors/env-model", json=update, headers=auth()),
        client.delete("/v1/connectors/env-status", headers=auth()),
    ):
        assert "settings" in problem(attempt, 409, "connector_settings_defined")["detail"]
    changed = client.put("/v1/connectors/my-model", json=update, headers=auth())
    assert changed.status_code == 200, changed.text
    assert changed.json()["backend"] == "https://api.example.com"
    assert client.get("/v1/connectors/my-model", headers=auth("operator")).json() == changed.json()
    problem(client.put("/v1/connectors/absent", json=update, headers=auth()), 404, "not_found")
    assert client.delete("/v1/connectors/my-model", headers=auth()).status_code == 204
    problem(client.get("/v1/connectors/my-model", headers=auth()), 404, "not_found")
    problem(client.delete("/v1/connectors/my-model", headers=auth()), 404, "not_found")


@pytest.mark.spec("§2.6 connector-resources", "C1 list-paging")
def test_the_list_pages_by_ref_across_both_sources(world):
    client, _, _, _ = world
    for ref in ("a-1", "zz", "f.5"):
        assert (
            client.post("/v1/connectors", json={**MODEL, "ref": ref}, headers=auth()).status_code
            == 201
        )
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({} if cursor is None else {"cursor": cursor})}
        page = client.get("/v1/connectors", params=params, headers=auth("operator"))
        seen += [c["ref"] for c in page.json()["connectors"]]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            assert "Link" not in page.headers
            break
        assert 'rel="next"' in page.headers["Link"]
    assert seen == ["a-1", "env-model", "env-status", "f.5", "zz"]
    bad = client.get("/v1/connectors", params={"cursor": "nope"}, headers=auth("operator"))
    problem(bad, 422, "validation_failed")


@pytest.mark.spec("§2.6 connector-resources", "§5 tenant-isolation")
def test_roles_and_tenants_are_kept_apart(world):
    client, models, _, _ = world
    assert client.post("/v1/connectors", json=MODEL, headers=auth()).status_code == 201
    problem(client.get("/v1/connectors", headers=auth("viewer")), 403, "forbidden")
    problem(
        client.post("/v1/connectors", json={**MODEL, "ref": "x"}, headers=auth("operator")),
        403,
        "forbidden",
    )
    problem(run_test(client, "my-model", role="analyst"), 403, "forbidden")
    other = auth("admin", tenant="globex")
    assert [c["ref"] for c in client.get("/v1/connectors", headers=other).json()["connectors"]] == [
        "env-model",
        "env-status",
    ]
    problem(client.get("/v1/connectors/my-model", headers=other), 404, "not_found")
    problem(
        client.put(
            "/v1/connectors/my-model",
            json={"backend_type": "model", "params": {"model_ref": "fast"}},
            headers=other,
        ),
        404,
        "not_found",
    )
    problem(client.delete("/v1/connectors/my-model", headers=other), 404, "not_found")
    problem(run_test(client, "my-model", tenant="globex"), 404, "not_found")
    assert models.calls() == 0
    # The same ref is free in another tenant, and its costs are its own.
    assert client.post("/v1/connectors", json=MODEL, headers=other).status_code == 201
    assert run_test(client, "my-model").json()["ok"] is True
    theirs = client.get("/v1/connector-costs", params={"campaign_id": "c1"}, headers=other).json()
    assert (theirs["committed_usd"], theirs["entries"]) == ("0", [])


@pytest.mark.spec("§2.6 connector-params-no-secrets")
def test_a_secret_value_is_refused_and_no_response_carries_one(world):
    client, _, endpoint, base = world
    literal = {
        "ref": "leaky",
        "backend_type": "http",
        "params": {"base_url": base, "api_key": "sk-live-0123456789abcdef"},
    }
    refused = client.post("/v1/connectors", json=literal, headers=auth())
    problem(refused, 422, "secret_value_refused")
    assert b"0123456789abcdef" not in refused.content
    problem(client.get("/v1/connectors/leaky", headers=auth()), 404, "not_found")  # nothing stored
    named = {
        "ref": "status",
        "backend_type": "http",
        "params": {
            "base_url": base,
            "path": "/health",
            "auth_header": "X-Api-Key",
            "auth_secret_ref": "STATUS_KEY",
        },
    }
    answers = [client.post("/v1/connectors", json=named, headers=auth())]
    answers.append(client.get("/v1/connectors/status", headers=auth()))
    answers.append(client.get("/v1/connectors", headers=auth()))
    answers.append(run_test(client, "status"))
    answers.append(client.get("/v1/connector-costs", params={"campaign_id": "c1"}, headers=auth()))
    assert answers[3].json()["ok"] is True, answers[3].text
    assert endpoint.received[-1].headers["x-api-key"] == STATUS_SECRET  # sent, by name
    for answer in answers:
        assert STATUS_SECRET.encode() not in answer.content
    assert answers[1].json()["params"]["auth_secret_ref"] == "STATUS_KEY"


def test_a_settings_file_with_a_secret_refuses_start_up_in_one_line(tmp_path):
    env = environment(tmp_path, "http://127.0.0.1:9")
    (tmp_path / "connectors.toml").write_text(
        '[connectors."bad"]\nbackend_type = "http"\n'
        'params = { base_url = "https://x.example", password = "hunter2" }\n'
    )
    with pytest.raises(SettingsError) as caught:
        Settings.from_mapping(env)
    message = str(caught.value)
    assert "ECP_CONNECTORS_FILE" in message
    assert "connector 'bad': params.password" in message
    assert "hunter2" not in message
    assert "\n" not in message


@pytest.mark.spec("§2.6 connector-test-response", "§2.6 connector-test-cost-caps")
def test_a_model_test_reserves_the_worst_case_and_commits_the_measured_cost(world):
    client, models, _, _ = world
    answer = run_test(client, "env-model", run_id="r1", run_cap_usd="2.00")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["ok"] is True
    assert body["latency_ms"] >= 0
    assert body["estimated_cost_usd"] == WORST_CASE
    assert body["cost_measurement"] == "measured"
    assert body["cleanup_status"] == "released"
    assert body["provider_request_id"].startswith("chatcmpl-standin-")
    assert (body["campaign_id"], body["operation_id"], body["detail"]) == ("c1", "op-1", None)
    sent = models.received("fast")[0].body
    assert sent["max_tokens"] == 16
    assert len(sent["messages"]) == 1
    scope = costs(client, run_id="r1")
    assert (scope["committed_usd"], scope["reserved_usd"]) == (DEFAULT_ANSWER_COST, "0")
    assert [
        (e["cost_event_id"], e["amount_usd"], e["cost_measurement"]) for e in scope["entries"]
    ] == [(body["cost_event_id"], DEFAULT_ANSWER_COST, "measured")]
    assert costs(client)["entries"] == []  # the run-less scope is another scope
    scraped = client.get("/metrics").text
    assert 'ecp_connector_tests_total{outcome="ok"} 1.0' in scraped


@pytest.mark.spec("§2.6 connector-test-response", "§2.6 connector-test-cost-caps")
def test_a_failed_call_is_ok_false_and_commits_only_what_was_measured(world):
    client, models, _, _ = world
    models.fail("fast", 500)
    failed = run_test(client, "env-model").json()
    assert failed["ok"] is False
    assert failed["detail"].startswith("server_error")
    assert (failed["cost_measurement"], failed["cleanup_status"]) == ("measured", "released")
    assert models.calls("fast") == 1  # one call: a test never retries
    scope = costs(client)
    assert (scope["committed_usd"], scope["reserved_usd"]) == ("0", "0")
    assert [e["amount_usd"] for e in scope["entries"]] == ["0"]


@pytest.mark.spec("§2.6 connector-test-cost-caps")
def test_a_timed_out_call_keeps_its_worst_case_as_estimated(tmp_path):
    with standin() as models:
        app = create_app(
            settings(tmp_path, models.url, ECP_CONNECTOR_TEST_TIMEOUT_SECONDS="0.5"),
            storage=MemoryStore(),
        )
        models.hang("fast", 5.0)
        with TestClient(app) as client:
            body = run_test(client, "env-model").json()
            scope = costs(client)
    assert body["ok"] is False
    assert body["detail"].startswith("timeout")
    assert body["cost_measurement"] == "estimated"
    assert (scope["committed_usd"], scope["reserved_usd"]) == (WORST_CASE, "0")


@pytest.mark.spec("§2.6 connector-test-cost-caps")
def test_over_max_cost_nothing_is_called_and_nothing_charged(world):
    client, models, _, _ = world
    body = run_test(client, "env-model", max_cost_usd="0.01").json()
    assert body["ok"] is False
    assert "max_cost_usd" in body["detail"]
    assert body["cleanup_status"] == "not_reserved"
    assert body["estimated_cost_usd"] == "0.175"  # the smallest test: 64 input, 1 output token
    assert (body["cost_event_id"], body["cost_measurement"]) == (None, None)
    assert models.calls() == 0
    assert (costs(client)["committed_usd"], costs(client)["entries"]) == ("0", [])
    # A budget between the smallest and the largest test shrinks the output limit instead.
    shrunk = run_test(client, "env-model", operation_id="op-2", max_cost_usd=0.2).json()
    assert (shrunk["ok"], shrunk["estimated_cost_usd"]) == (True, "0.19")
    assert models.received("fast")[0].body["max_tokens"] == 2


@pytest.mark.spec("§2.6 connector-test-cost-caps")
def test_over_the_run_cap_nothing_is_called_and_nothing_charged(world):
    client, models, _, _ = world
    answers = [
        run_test(client, "env-model", operation_id=f"op-{n}", run_id="r1", run_cap_usd=0.3).json()
        for n in range(3)
    ]
    assert [a["ok"] for a in answers] == [True, True, False]
    assert [a["estimated_cost_usd"] for a in answers[:2]] == ["0.295", "0.19"]
    assert "run_cap_usd" in answers[2]["detail"]
    assert answers[2]["cleanup_status"] == "not_reserved"
    assert models.calls() == 2
    scope = costs(client, run_id="r1")
    assert (scope["committed_usd"], scope["reserved_usd"]) == ("0.155", "0")  # 0.1 + 0.055
    assert len(scope["entries"]) == 2


@pytest.mark.spec("§2.6 connector-test-idempotent")
def test_a_repeated_test_returns_the_stored_answer_without_a_call(world):
    client, models, _, _ = world
    first = run_test(client, "env-model", max_cost_usd="0.4")
    again = run_test(client, "env-model", max_cost_usd=0.40)
    assert again.json() == first.json()
    assert models.calls() == 1
    assert len(costs(client)["entries"]) == 1
    changed = run_test(client, "env-model", max_cost_usd="0.5")
    problem(changed, 409, "conflict")
    refused = run_test(client, "env-model", operation_id="op-2", max_cost_usd="0.001")
    assert (
        run_test(client, "env-model", operation_id="op-2", max_cost_usd="0.001").json()
        == refused.json()
    )
    assert models.calls() == 1
    assert 'outcome="replayed"} 2.0' in client.get("/metrics").text


@pytest.mark.spec("§2.6 connector-test-response")
def test_an_http_connector_reserves_and_measures_zero(world):
    client, _, endpoint, base = world
    connector = {
        "ref": "status",
        "backend_type": "http",
        "params": {"base_url": base, "path": "/health"},
    }
    assert client.post("/v1/connectors", json=connector, headers=auth()).status_code == 201
    endpoint.reply_headers = {"X-Request-Id": "upstream-1"}
    ok = run_test(client, "status", max_cost_usd="0.000001", run_cap_usd="0.000001").json()
    assert (ok["ok"], ok["estimated_cost_usd"], ok["cost_measurement"]) == (True, "0", "measured")
    assert ok["provider_request_id"] == "upstream-1"
    assert endpoint.received[-1].method == "GET"
    endpoint.script = [503]
    down = run_test(client, "status", operation_id="op-2").json()
    assert (down["ok"], down["detail"]) == (False, "the endpoint answered 503")
    assert costs(client)["committed_usd"] == "0"
    missing = {"base_url": base, "auth_secret_ref": "NOT_SET"}
    client.put(
        "/v1/connectors/status", json={"backend_type": "http", "params": missing}, headers=auth()
    )
    unset = run_test(client, "status", operation_id="op-3").json()
    assert unset["ok"] is False
    assert unset["detail"].startswith("secret_missing")


def test_private_targets_are_refused_unless_allowed(tmp_path):
    with standin() as models, receiver() as endpoint:
        app = create_app(
            settings(tmp_path, models.url, ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS="false"),
            storage=MemoryStore(),
        )
        connector = {"ref": "local", "backend_type": "http", "params": {"base_url": endpoint.url}}
        with TestClient(app) as client:
            client.post("/v1/connectors", json=connector, headers=auth())
            body = run_test(client, "local").json()
    assert body["ok"] is False
    assert body["detail"].startswith("target_refused")
    assert "ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS" in body["detail"]
    assert endpoint.received == []


@pytest.mark.spec("§2.6 connector-test-request", "§2.6 connector-test-response")
def test_only_a_malformed_request_or_an_unknown_connector_is_an_error(world):
    client, models, _, _ = world
    problem(run_test(client, "absent"), 404, "not_found")
    problem(run_test(client, "env-model", campaign_id="c" * 129), 422, "validation_failed")
    problem(run_test(client, "env-model", max_cost_usd=0), 422, "validation_failed")
    problem(run_test(client, "env-model", run_cap_usd="-1"), 422, "validation_failed")
    problem(run_test(client, "env-model", surprise=True), 422, "validation_failed")
    assert models.calls() == 0
    models.script("fast", Reply("OK", input_tokens=500, output_tokens=5))
    overrun = run_test(client, "env-model").json()
    assert overrun["ok"] is False
    assert "beyond the bound" in overrun["detail"]
    assert costs(client)["committed_usd"] == "1.325"  # committed in full, never understated


def test_the_routes_are_documented(world):
    client, _, _, _ = world
    document = client.get("/openapi.json").json()
    paths = document["paths"]
    assert set(paths["/v1/connectors"]) == {"get", "post"}
    assert set(paths["/v1/connectors/{ref}"]) == {"get", "put", "delete"}
    assert "post" in paths["/v1/connectors/{ref}/test"]
    assert "get" in paths["/v1/connector-costs"]
    schemas = document["components"]["schemas"]
    assert schemas["ConnectorTestRequest"]["additionalProperties"] is False
    assert "anyOf" in schemas["ConnectorTestRequest"]["properties"]["max_cost_usd"]
