"""Backtests over HTTP, end to end: the app on the memory store, entitlements on, the loopback
stand-in provider with injected faults, and the server's own background sweep running them."""

import base64
import time
from datetime import UTC, datetime, timedelta

import attrs
import pytest
import stamina
from starlette.testclient import TestClient
from tests.support.backtests import KEY, request_body, world

from ecp_core.billing.model import PlanName, SubscriptionStatus, trial_subscription
from ecp_core.entitlements.model import Meter
from ecp_core.memory import MemoryStore
from ecp_http.config.hosted import HostedSettings
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "q" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")


@pytest.fixture(autouse=True)
def one_try_per_call():
    with stamina.set_testing(True, attempts=1):  # each port call is one HTTP call here
        yield


@pytest.fixture
def armed():
    with world() as stand_in:
        yield stand_in


def settings(armed, **changes) -> Settings:
    catalog = armed.setup().provider.catalog
    values = {"backtest_digest_key": KEY, "backtest_digest_key_id": "current", **changes}
    return Settings(
        jwt_secret=SECRET,
        audit_signing_key=SEED,
        hosted=HostedSettings(entitlements_enabled=True),
        model_catalog=dict(catalog),
        **values,
    )


def auth(role="analyst"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant='acme', roles=[role])}"}


def subscribe(store, *, plan=PlanName.SOLO, status=SubscriptionStatus.ACTIVE, replace=False):
    start = datetime.now(UTC) - timedelta(days=1)
    subscription = attrs.evolve(
        trial_subscription("acme", start),
        plan=plan,
        status=status,
        period_end=start + timedelta(days=30 if plan is PlanName.SOLO else 14),
    )
    with store.unit_of_work() as tx:
        (tx.subscriptions.save if replace else tx.subscriptions.add)(subscription)
        tx.commit()
    return start


def used(store, start):
    with store.unit_of_work() as tx:
        return tx.meters.usage("acme", start)


def problem(answer, status, code):
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code
    return answer.json()


def wait_finished(client, backtest_id, seconds=30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        body = client.get(f"/v1/backtests/{backtest_id}", headers=auth()).json()
        if body["status"] == "finished":
            return body
        time.sleep(0.1)
    raise AssertionError(f"backtest {backtest_id} did not finish")


@pytest.mark.spec(
    "§4.4 backtest-case-verdicts", "§8 backtest-metering", "§4.4 backtest-retains-no-raw-data"
)
def test_every_verdict_kind_appears_errors_abstain_and_credits_balance(armed):
    """Run by the server's sweep: each fault gives its verdict; reserved - used = returned."""
    from ecp_http.outbound.model_calls.standin import Reply

    store = MemoryStore()
    start = subscribe(store)
    armed.answers["small"] = {"q0": "wrong"}  # case 0: incumbent correct, candidate incorrect
    armed.judge_says["a1"] = '{"verdict": "unresolved"}'  # case 1: unresolved on both sides
    armed.standin.script("big", Reply("a0"), Reply("a1")).fail("big", 400)  # case 2: replay_error
    armed.judge_says["a3"] = "I would rather not say."  # case 3: judge_error
    armed.standin.script("big", Reply("a3")).hang("big", 60.0)  # case 4: cut by the deadline
    # The deadline leaves cases 0-3 time on a loaded machine; case 4 hangs far past it.
    app = create_app(settings(armed, backtest_deadline_seconds=12.0), storage=store)
    with TestClient(app) as client:
        accepted = client.post("/v1/backtests", json=request_body(6), headers=auth())
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["status"] == "queued"
        backtest_id = accepted.json()["backtest_id"]
        assert accepted.headers["Location"] == f"/v1/backtests/{backtest_id}"
        done = wait_finished(client, backtest_id)
    cases = done["evaluation_evidence"]["cases"]
    kinds = {side[k]["verdict"] for side in cases for k in ("incumbent", "candidate")}
    assert kinds == {"correct", "incorrect", "unresolved", "replay_error", "judge_error", "not_run"}
    assert [c["case_index"] for c in cases] == list(range(6))
    assert cases[4]["incumbent"]["failure"] == "deadline"
    result = done["result"]
    assert result["verdict"] == "abstain"
    assert result["recommended_action"] == "keep_incumbent"
    assert set(result["abstain_reasons"]) == {
        "unresolved_verdicts",
        "replay_errors",
        "judge_errors",
        "cases_not_run",
    }
    assert result["candidate"]["success_rate"] == pytest.approx(
        sum(c["candidate"]["verdict"] == "correct" for c in cases) / 6
    )
    metering = done["metering"]
    assert metering["calls_reserved"] == 24
    assert metering["calls_reserved"] - metering["calls_used"] == metering["calls_returned"]
    assert metering["calls_used"] == armed.standin.calls() == result["provider_calls"]
    assert used(store, start) == {
        Meter.HOSTED_BACKTESTS: 1,
        Meter.PROVIDER_CALL_CREDITS: metering["calls_used"],
    }
    stored = repr(store.tables.data)
    for raw in ("Answer with the code", "'q1'", "'wrong'", "rather not say", "rationale"):
        assert raw not in stored
    assert not store.tables.table("backtest_inputs")


@pytest.mark.spec("C13 backtest-routes", "§4.4 backtest-call-reservation", "§2.9 backtest-record")
def test_a_finished_exact_retry_answers_200_with_no_call_and_no_charge(armed):
    store = MemoryStore()
    start = subscribe(store)
    app = create_app(settings(armed), storage=store, start_workers=False)
    with TestClient(app) as client:
        first = client.post("/v1/backtests", json=request_body(), headers=auth())
        assert first.status_code == 202
        queued_again = client.post("/v1/backtests", json=request_body(), headers=auth())
        assert (queued_again.status_code, queued_again.json()["backtest_id"]) == (
            202,
            first.json()["backtest_id"],
        )
        app.state.runtime.ecp.backtests.run_queued()
        calls, meters = armed.standin.calls(), used(store, start)
        retried = client.post("/v1/backtests", json=request_body(), headers=auth())
        listed = client.get("/v1/backtests?limit=1", headers=auth())
    assert retried.status_code == 200
    body = retried.json()
    assert body["backtest_id"] == first.json()["backtest_id"]
    assert (armed.standin.calls(), used(store, start)) == (calls, meters)
    assert body["result"]["verdict"] == "pass"
    assert body["result"]["recommended_action"] == "review_candidate"
    assert (body["claim_class"], body["method_version"]) == (
        "exploratory_model_experiment",
        "observed-replay-policy/1",
    )
    assert body["request_digest"].startswith("hmac-sha256:")
    assert body["digest_key_id"] == "current"
    evidence = body["evaluation_evidence"]
    assert (evidence["rubric"], evidence["judge_parameter"]) == (
        "correctness-replay/4",
        "judge_max_tokens_8192",
    )
    assert evidence["judge"]["family"] == "judges"
    assert body["limitations"]
    assert meters == {Meter.HOSTED_BACKTESTS: 1, Meter.PROVIDER_CALL_CREDITS: 20}
    judge_body = armed.standin.received("judge")[0].body
    assert judge_body["max_tokens"] == 8192
    assert listed.json()["backtests"][0]["backtest_id"] == body["backtest_id"]


@pytest.mark.spec("§7 backtest-after-cancel", "§7 meter-exhausted", "C12 quota-answers")
def test_402_after_cancel_and_429_when_exhausted_and_neither_meter_moves(armed):
    store = MemoryStore()
    start = subscribe(store, plan=PlanName.TRIAL, status=SubscriptionStatus.TRIALING)
    app = create_app(settings(armed), storage=store, start_workers=False)
    with TestClient(app) as client:
        problem(
            client.post("/v1/backtests", json=request_body(26), headers=auth()),
            422,
            "validation_failed",
        )
        assert (
            client.post("/v1/backtests", json=request_body(25), headers=auth()).status_code == 202
        )
        taken = used(store, start)
        assert taken == {Meter.HOSTED_BACKTESTS: 1, Meter.PROVIDER_CALL_CREDITS: 100}
        refused = client.post("/v1/backtests", json=request_body(5), headers=auth())
        problem(refused, 429, "quota_exhausted")
        assert int(refused.headers["Retry-After"]) > 0
        assert used(store, start) == taken
        subscribe(store, plan=PlanName.TRIAL, status=SubscriptionStatus.CANCELED, replace=True)
        problem(
            client.post("/v1/backtests", json=request_body(5), headers=auth()),
            402,
            "subscription_inactive",
        )
        assert used(store, start) == taken
        assert armed.standin.calls() == 0


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"constraints": {}}, ["constraints", "min_success_rate"]),
        ({"cases": [{"input": "q", "expected": "a"}] * 4}, ["cases"]),
        ({"judge": "big"}, ["judge"]),
        ({"judge": "nope"}, ["judge"]),
        ({"candidate": {"model": "small", "top_p": 0.5}}, ["candidate", "top_p"]),
    ],
)
def test_bad_requests_are_422_and_change_nothing(armed, change, loc):
    store = MemoryStore()
    start = subscribe(store)
    app = create_app(settings(armed), storage=store, start_workers=False)
    with TestClient(app) as client:
        answer = client.post("/v1/backtests", json=request_body(**change), headers=auth())
        listed = client.get("/v1/backtests", headers=auth()).json()
    body = problem(answer, 422, "validation_failed")
    assert loc in [e["loc"] for e in body["errors"]]
    assert (listed["backtests"], used(store, start)) == ([], {})


def test_roles_without_the_backtest_permission_are_403_and_without_a_key_backtests_are_off(armed):
    store = MemoryStore()
    subscribe(store)
    with TestClient(create_app(settings(armed), storage=store, start_workers=False)) as client:
        for role in ("viewer", "approver", "operator"):
            problem(
                client.post("/v1/backtests", json=request_body(), headers=auth(role)),
                403,
                "forbidden",
            )
        problem(client.get("/v1/backtests/nope", headers=auth()), 404, "not_found")
    off = settings(armed, backtest_digest_key=None, backtest_digest_key_id=None)
    with TestClient(create_app(off, storage=store, start_workers=False)) as client:
        off_answer = client.post("/v1/backtests", json=request_body(), headers=auth())
    assert "ECP_BACKTEST_DIGEST_KEY" in problem(off_answer, 422, "validation_failed")["detail"]
