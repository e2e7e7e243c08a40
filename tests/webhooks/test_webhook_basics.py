"""Webhook basics: subscription validation, signatures, and the retry schedule's promises."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import ValidationFailed
from ecp_core.webhooks import (
    CreateSubscriptionRequest,
    RetrySchedule,
    next_delay,
    sign_body,
    signature_matches,
)
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

GOOD = {
    "deployment_ref": "refunds",
    "target_url": "https://hooks.example.com/ecp",
    "event_types": ["run.completed"],
}


def locs(data):
    with pytest.raises(ValidationFailed) as caught:
        structure(data, CreateSubscriptionRequest)
    return {e.loc[0] for e in caught.value.errors}


@pytest.mark.spec("§2.7 subscription-request")
def test_a_good_subscription():
    request = structure(GOOD, CreateSubscriptionRequest)
    assert request.tenant_id == "default"
    assert request.secret is None


@pytest.mark.spec("§2.7 subscription-request")
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"event_types": []}, "event_types"),
        ({"event_types": ["run.completed"] * 2}, "event_types"),
        (
            {
                "event_types": [
                    "run.started",
                    "run.completed",
                    "run.failed",
                    "approval.requested",
                    "approval.resolved",
                    "run.waiting_approval",
                ]
            },
            "event_types",
        ),
        ({"event_types": ["run.exploded"]}, "event_types"),
        ({"target_url": "ftp://example.com/x"}, "target_url"),
        ({"target_url": "https://" + "a" * 2048}, "target_url"),
        ({"deployment_ref": "d" * 513}, "deployment_ref"),
        ({"tenant_id": ""}, "tenant_id"),
        ({"url": "https://example.com"}, "url"),
    ],
)
def test_subscription_limits(change, field):
    assert field in locs({**GOOD, **change})


@pytest.mark.spec("§5 outbound-signature")
def test_signatures():
    body = b'{"event_id":"e1"}'
    signature = sign_body("s3cret-s3cret-s3cret", body)
    assert signature == signature.lower()
    assert len(signature) == 64
    assert signature_matches("s3cret-s3cret-s3cret", body, signature)
    assert not signature_matches("s3cret-s3cret-s3cret", body + b" ", signature)
    assert not signature_matches("other-secret-other", body, signature)


policies = st.builds(
    RetrySchedule,
    max_attempts=st.integers(1, 10),
    base_seconds=st.floats(0.01, 60),
    max_seconds=st.floats(1, 7200),
)


@pytest.mark.spec("§6.1 retry-and-dead-letter")
@given(policies, st.integers(1, 200), st.integers(0, 2**32))
def test_delays_stay_within_half_the_ceiling_and_the_ceiling(policy, attempt, seed):
    delay = next_delay(policy, attempt, rng=random.Random(seed))
    ceiling = policy.ceiling(attempt)
    assert ceiling / 2 <= delay <= ceiling <= policy.max_seconds


@pytest.mark.spec("§6.1 retry-and-dead-letter")
@given(policies, st.integers(1, 200))
def test_ceilings_never_shrink(policy, attempt):
    assert policy.ceiling(attempt) <= policy.ceiling(attempt + 1)


@pytest.mark.spec("§6.1 retry-and-dead-letter")
@given(policies, st.integers(1, 50), st.floats(0.001, 10_000), st.integers(0, 2**32))
def test_retry_after_is_a_floor_up_to_the_cap(policy, attempt, retry_after, seed):
    delay = next_delay(policy, attempt, retry_after=retry_after, rng=random.Random(seed))
    assert delay >= min(retry_after, policy.max_seconds)
    assert delay <= max(policy.ceiling(attempt), min(retry_after, policy.max_seconds))


@pytest.mark.spec("§6.1 retry-and-dead-letter")
def test_jitter_spreads_delays():
    delays = {
        round(next_delay(RetrySchedule(), 3, rng=random.Random(seed)), 6) for seed in range(50)
    }
    assert len(delays) > 40
    with pytest.raises(ValueError, match="from 1"):
        next_delay(RetrySchedule(), 0)
