"""CandidateOutcome over HTTP: a finished backtest's ``candidates``, replayed on the loopback
stand-in provider, checked against the OpenAPI document; and a result stored before outcomes
existed, read from PostgreSQL, gains them."""

import base64
from typing import Any

import jsonschema
import psycopg
import pytest
import stamina
from psycopg.types.json import Jsonb
from starlette.testclient import TestClient
from tests.support.backtests import KEY, old_record, request_body, world

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "q" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")
RULE = "§2.6 candidate-outcome"


@pytest.fixture(autouse=True)
def one_try_per_call():
    with stamina.set_testing(True, attempts=1):  # each port call is one HTTP call here
        yield


@pytest.fixture
def armed():
    with world() as stand_in:
        yield stand_in


def settings(armed, **changes: Any) -> Settings:
    return Settings(
        jwt_secret=SECRET,
        audit_signing_key=SEED,
        model_catalog=dict(armed.setup().provider.catalog),
        backtest_digest_key=KEY,
        backtest_digest_key_id="current",
        **changes,
    )


def auth(tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=['analyst'])}"}


def documented(client: TestClient, answer: Any, path: str, method: str = "get") -> Any:
    """The answer's JSON, validated against the schema the OpenAPI document gives it."""
    document = client.get("/openapi.json").json()
    response = document["paths"][path][method]["responses"][str(answer.status_code)]
    schema = response["content"]["application/json"]["schema"]
    jsonschema.Draft202012Validator(
        {**document, **schema}, format_checker=jsonschema.FormatChecker()
    ).validate(answer.json())
    return answer.json()


@pytest.mark.spec(RULE, "C13 backtest-routes")
def test_a_finished_backtest_shows_the_incumbent_then_the_candidate(armed):
    """Prices per million tokens: big 10 in / 30 out, small 1 / 2; every replay is 20 in, 4 out."""
    armed.answers["small"] = {"q3": "wrong"}  # the candidate gets 4 of 5 right: 0.8, the floor
    app = create_app(settings(armed), storage=MemoryStore(), start_workers=False)
    with TestClient(app) as client:
        queued = client.post("/v1/backtests", json=request_body(), headers=auth())
        assert documented(client, queued, "/v1/backtests", "post")["candidates"] is None
        backtest_id = queued.json()["backtest_id"]
        app.state.runtime.ecp.backtests.run_queued()
        one = documented(
            client,
            client.get(f"/v1/backtests/{backtest_id}", headers=auth()),
            "/v1/backtests/{backtest_id}",
        )
        listed = documented(client, client.get("/v1/backtests", headers=auth()), "/v1/backtests")
        retried = client.post("/v1/backtests", json=request_body(), headers=auth())
        hidden = client.get(f"/v1/backtests/{backtest_id}", headers=auth("other"))
    assert one["result"]["verdict"] == "pass"
    incumbent, candidate = one["candidates"]
    assert incumbent == {
        "model": "big",
        "provider": "openai",
        "capability_ok": True,
        "cases_errored": 0,
        "cases_evaluated": 5,
        "equivalence_rate": 1.0,
        "error_rate": 0.0,
        "est_cost_per_1k_calls_usd": 0.32,  # (20 * 10 + 4 * 30) / 10^6 per call, * 1000
        "is_incumbent": True,
        "meets_bar": True,
        "savings_pct": None,
    }
    assert candidate == {
        "model": "small",
        "provider": "openai",
        "capability_ok": True,
        "cases_errored": 0,
        "cases_evaluated": 5,
        "equivalence_rate": 0.8,
        "error_rate": 0.0,
        "est_cost_per_1k_calls_usd": 0.028,  # (20 * 1 + 4 * 2) / 10^6 per call, * 1000
        "is_incumbent": False,
        "meets_bar": True,
        "savings_pct": 91.25,  # (0.32 - 0.028) ÷ 0.32 * 100
    }
    assert candidate["equivalence_rate"] == one["result"]["candidate"]["success_rate"]
    assert listed["backtests"][0]["candidates"] == one["candidates"]
    assert retried.status_code == 200
    assert retried.json()["candidates"] == one["candidates"]
    assert hidden.status_code == 404


@pytest.mark.spec(RULE)
def test_a_candidate_with_its_own_settings_is_not_capability_ok_and_nothing_is_called(armed):
    app = create_app(settings(armed), storage=MemoryStore(), start_workers=False)
    body = request_body(candidate={"model": "small", "temperature": 0.2})
    with TestClient(app) as client:
        backtest_id = client.post("/v1/backtests", json=body, headers=auth()).json()["backtest_id"]
        app.state.runtime.ecp.backtests.run_queued()
        one = client.get(f"/v1/backtests/{backtest_id}", headers=auth()).json()
    assert one["result"]["abstain_reasons"] == ["candidate_settings_beyond_model", "cases_not_run"]
    assert [c["capability_ok"] for c in one["candidates"]] == [True, False]
    for outcome in one["candidates"]:
        assert (outcome["cases_evaluated"], outcome["cases_errored"]) == (0, 0)
        assert (outcome["equivalence_rate"], outcome["meets_bar"]) == (0.0, False)
        assert outcome["est_cost_per_1k_calls_usd"] is None
        assert outcome["savings_pct"] is None
    assert armed.standin.calls() == 0


@pytest.mark.spec(RULE, "§2.9 backtest-record")
def test_a_result_stored_before_outcomes_existed_gains_them_on_postgres(armed, fresh_database):
    record = old_record()
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ecp_backtests (backtest_id, tenant_id, request_digest, status,"
            " created_at, calls, record) VALUES (%s, %s, %s, 'finished', %s, 20, %s)",
            ("bt-old", "acme", record["request_digest"], record["created_at"], Jsonb(record)),
        )
    app = create_app(settings(armed, database_url=fresh_database), start_workers=False)
    with TestClient(app) as client:
        one = documented(
            client,
            client.get("/v1/backtests/bt-old", headers=auth()),
            "/v1/backtests/{backtest_id}",
        )
        with psycopg.connect(fresh_database) as conn:
            row = conn.execute("SELECT record FROM ecp_backtests").fetchone()
    assert row is not None
    assert row[0] == record  # reading changed nothing stored
    assert (one["status"], one["result"]["verdict"]) == ("finished", "pass")
    assert one["evaluation_evidence"]["rubric"] == "correctness-replay/2"
    assert [(c["model"], c["provider"]) for c in one["candidates"]] == [
        ("big", "openai"),
        ("small", "anthropic"),
    ]
    assert [c["equivalence_rate"] for c in one["candidates"]] == [1.0, 0.6]
    assert [c["est_cost_per_1k_calls_usd"] for c in one["candidates"]] == [6.0, 2.0]
    assert one["candidates"][1]["savings_pct"] == 66.666666666667
