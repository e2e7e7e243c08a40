"""Entitlements over HTTP on the memory store: 402 and 429 problems, Retry-After, the reset.

Subscriptions are seeded through the store's unit of work, as the billing area stores them; the
requests go through the whole app with enforcement on (``ECP_CLOUD_ENTITLEMENTS_ENABLED``).
"""

import base64
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from starlette.testclient import TestClient

from ecp_core.billing.model import PlanName, Subscription, SubscriptionStatus, trial_subscription
from ecp_core.entitlements.model import Meter
from ecp_core.memory import MemoryStore
from ecp_http.config.hosted import HostedSettings
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "q" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")
DAY = 86_400


def settings(*, enabled: bool = True) -> Settings:
    return Settings(
        jwt_secret=SECRET,
        audit_signing_key=SEED,
        hosted=HostedSettings(entitlements_enabled=enabled),
    )


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def client(store) -> Iterator[TestClient]:
    with TestClient(create_app(settings(), storage=store, start_workers=False)) as test_client:
        yield test_client


def auth(role="analyst", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def seed(store, subscription: Subscription, *, replace: bool = False) -> None:
    with store.unit_of_work() as tx:
        if replace:
            tx.subscriptions.save(subscription)
        else:
            tx.subscriptions.add(subscription)
        tx.commit()


def now() -> datetime:
    return datetime.now(UTC)


def solo(start: datetime, *, status=SubscriptionStatus.ACTIVE, days: int = 30) -> Subscription:
    return attrs.evolve(
        trial_subscription("acme", start),
        plan=PlanName.SOLO,
        status=status,
        period_end=start + timedelta(days=days),
        merchant_subscription_id="sub_1",
        price_id="pri_solo",
    )


def used(store, period_start) -> dict[Meter, int]:
    with store.unit_of_work() as tx:
        return tx.meters.usage("acme", period_start)


def compare(client, day: int):
    body = {
        "workflow_id": "claims",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": "2026-10-01T00:00:00Z",
        "end": f"2026-10-{day:02d}T00:00:00Z",
        "policy": {"min_success_rate": 0.5},
    }
    return client.post("/v1/decisions/compare", json=body, headers=auth())


def executions(client, ids):
    events = [
        {
            "event_id": f"e{i:06d}",
            "workflow_id": "claims",
            "workflow_version": "v1",
            "run_id": f"r{i:06d}",
            "occurred_at": "2026-10-01T00:00:00Z",
            "cost_usd": None,
            "cost_measurement": "unmeasured",
            "charge_id": f"c{i:06d}",
        }
        for i in ids
    ]
    return client.post("/v1/evidence/executions", json={"events": events}, headers=auth("operator"))


def problem(answer, status, code):
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert (body["status"], body["code"]) == (status, code)
    return body


@pytest.mark.spec("§7 backtest-after-cancel", "C12 quota-answers")
@pytest.mark.parametrize("status", ["canceled", "paused", "past_due"])
def test_after_a_cancel_metered_calls_are_402_and_reads_still_answer(client, store, status):
    """Canceled, paused or past due: 402 subscription_inactive, nothing counted, history read."""
    start = now() - timedelta(days=2)
    seed(store, solo(start))
    assert compare(client, 2).status_code == 201
    seed(store, solo(start, status=SubscriptionStatus(status)), replace=True)
    problem(compare(client, 3), 402, "subscription_inactive")
    problem(executions(client, range(3)), 402, "subscription_inactive")
    assert used(store, start) == {Meter.DECISION_SCANS: 1}
    history = client.get("/v1/decisions", headers=auth())
    assert history.status_code == 200
    assert len(history.json()["decisions"]) == 1


@pytest.mark.spec("C12 quota-answers")
def test_a_tenant_without_a_subscription_is_402(client):
    """No subscription at all: 402."""
    problem(compare(client, 2), 402, "subscription_inactive")


@pytest.mark.spec("C12 quota-answers", "C6 evidence-ingestion")
def test_a_bad_execution_batch_is_422_before_an_inactive_subscription_s_402(client):
    """The route reads its body inside the unit of work (ADR 0060): the body's errors still
    come before the 402 a good body gets."""
    bad = {"event_id": "e1", "workflow_id": "claims", "workflow_version": "v1", "attempt": 0}
    answer = client.post(
        "/v1/evidence/executions", json={"events": [bad]}, headers=auth("operator")
    )
    problem(answer, 422, "validation_failed")
    problem(executions(client, range(2)), 402, "subscription_inactive")


@pytest.mark.spec("§7 meter-exhausted", "C12 quota-answers", "§8 trial-quotas")
def test_an_exhausted_meter_is_429_with_retry_after_and_advances_nothing(client, store):
    """The trial's one scan used: 429 quota_exhausted, Retry-After to the trial's end, and the
    refused call counts nothing; an exact retry of the first still answers its decision."""
    start = now() - timedelta(days=1)
    seed(store, trial_subscription("acme", start))
    first = compare(client, 2)
    assert first.status_code == 201
    refused = compare(client, 3)
    problem(refused, 429, "quota_exhausted")
    wait = int(refused.headers["Retry-After"])
    assert 12 * DAY < wait <= 13 * DAY
    assert used(store, start) == {Meter.DECISION_SCANS: 1}
    retried = compare(client, 2)
    assert retried.status_code == 200
    assert retried.json() == first.json()
    assert used(store, start) == {Meter.DECISION_SCANS: 1}


@pytest.mark.spec("§7 meter-exhausted", "C12 quota-answers")
def test_an_ingestion_batch_past_the_allowance_is_refused_whole(client, store):
    """A batch over what is left stores nothing and counts nothing; one that fits is stored."""
    start = now() - timedelta(days=1)
    seed(store, trial_subscription("acme", start))
    with store.unit_of_work() as tx:
        tx.meters.add("acme", Meter.INGESTED_EVENTS, start, 9_998)
        tx.commit()
    problem(executions(client, range(3)), 429, "quota_exhausted")
    assert used(store, start) == {Meter.INGESTED_EVENTS: 9_998}
    stored = executions(client, range(2))
    assert stored.status_code == 200, stored.text
    assert stored.json()["stored"] == 2
    assert executions(client, range(2)).json()["replayed"] == 2  # a replay takes nothing
    assert used(store, start) == {Meter.INGESTED_EVENTS: 10_000}


@pytest.mark.spec("§3.6 trialing-gets-trial-quotas")
def test_a_trialing_subscription_with_the_solo_price_gets_trial_quotas(client, store):
    """Trialing at the merchant on the Solo plan and price: one scan, then 429."""
    start = now() - timedelta(days=1)
    seed(store, solo(start, status=SubscriptionStatus.TRIALING, days=14))
    assert compare(client, 2).status_code == 201
    problem(compare(client, 3), 429, "quota_exhausted")


@pytest.mark.spec("§8 solo-quotas")
def test_the_meters_reset_with_the_subscription_period(client, store):
    """Used up in one period; the merchant's next period starts the meters again at zero."""
    start = now() - timedelta(days=20)
    seed(store, solo(start))
    with store.unit_of_work() as tx:
        tx.meters.add("acme", Meter.DECISION_SCANS, start, 155)
        tx.commit()
    problem(compare(client, 2), 429, "quota_exhausted")
    renewed = start + timedelta(days=19)
    seed(store, solo(renewed), replace=True)
    assert compare(client, 2).status_code == 201
    assert used(store, renewed) == {Meter.DECISION_SCANS: 1}
    assert used(store, start) == {Meter.DECISION_SCANS: 155}


@pytest.mark.spec("§8 trial-quotas")
def test_schedules_past_the_plan_s_count_are_refused(client, store):
    """The trial's one schedule: the second is 429 and not stored."""
    seed(store, trial_subscription("acme", now() - timedelta(hours=1)))
    body = {
        "workflow_id": "claims",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "interval_seconds": DAY,
        "window_seconds": 7 * DAY,
        "policy": {"min_success_rate": 0.5},
    }
    assert client.post("/v1/decision-schedules", json=body, headers=auth()).status_code == 201
    refused = client.post("/v1/decision-schedules", json=body, headers=auth())
    problem(refused, 429, "quota_exhausted")
    assert "Retry-After" in refused.headers
    listed = client.get("/v1/decision-schedules", headers=auth()).json()["schedules"]
    assert len(listed) == 1
    too_often = client.post(
        "/v1/decision-schedules", json=body | {"interval_seconds": DAY - 1}, headers=auth()
    )
    assert too_often.status_code == 422


@pytest.mark.spec("§5 entitlements-off-self-hosted")
def test_enforcement_is_off_by_default(store):
    """Without the flag no subscription is needed and nothing is metered."""
    assert Settings.from_mapping({}).hosted.entitlements_enabled is False
    with TestClient(create_app(settings(enabled=False), storage=store)) as client:
        for day in (2, 3, 4):
            assert compare(client, day).status_code == 201
    assert used(store, now()) == {}
