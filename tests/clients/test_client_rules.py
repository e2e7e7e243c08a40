"""The Python client's rules in one process: retries, waits, pages, problems and signatures.

``Retrying`` runs on a clock the test advances; the webhook signatures are made by the Standard
Webhooks reference library, which shares no code with ``ecp_client.webhooks``.
"""

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook

from ecp_client import EcpError
from ecp_client._core import Answer, Call, Retrying, RetryPolicy, error, nothing, retry_after
from ecp_client.models import ClaimedTask, SubscriptionCreated, SubscriptionView
from ecp_client.problems import BY_CODE, HttpError
from ecp_client.webhooks import WebhookVerificationFailed, verify

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


policies = st.builds(
    RetryPolicy,
    attempts=st.integers(1, 12),
    max_wait=st.floats(0.1, 60),
    deadline=st.floats(0, 300),
    backoff=st.floats(0.01, 2),
)
answers = st.tuples(
    st.sampled_from([200, 201, 404, 409, 429, 500, 502, 503]),
    st.one_of(st.none(), st.integers(0, 4000).map(str), st.just("soon")),
)


@pytest.mark.spec("C18 client-py-retries")
@given(policy=policies, sequence=st.lists(answers, min_size=1, max_size=20))
def test_waits_are_capped_and_stop_at_the_deadline_the_tries_or_a_final_answer(policy, sequence):
    clock = Clock()
    retrying = Retrying(policy, clock)
    tries = 0
    for status, after in sequence:
        tries += 1
        headers = {} if after is None else {"retry-after": after}
        wait = retrying.after_answer(Answer(status=status, headers=headers, content=b""))
        if status not in {429, 503}:
            assert wait is None
            break
        if wait is None:
            break
        assert 0 <= wait <= policy.max_wait
        if after is not None and after.isdigit():
            assert wait == min(float(after), policy.max_wait)
        clock.now += wait
        assert clock.now - 1000.0 <= policy.deadline
    assert tries <= policy.attempts


@pytest.mark.spec("C18 client-py-retries")
@given(method=st.sampled_from(["GET", "PUT", "DELETE", "POST"]), idempotent=st.booleans())
def test_a_broken_try_is_repeated_only_when_harmless_and_an_unsent_one_always(method, idempotent):
    call = Call(method=method, path="/x", read=nothing, idempotent=idempotent)
    harmless = method != "POST" or idempotent
    assert (Retrying(RetryPolicy()).after_failure(call, sent=True) is not None) == harmless
    assert Retrying(RetryPolicy()).after_failure(call, sent=False) is not None


@pytest.mark.spec("C18 client-py-retries")
def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("7") == 7.0
    date = (NOW + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert retry_after(date, now=NOW) == 30.0
    assert retry_after("Mon, 01 Jan 2001 00:00:00 GMT", now=NOW) == 0.0
    assert retry_after("later") is None
    assert retry_after(None) is None


@pytest.mark.spec("C18 client-py-retries")
def test_every_try_of_a_post_has_one_key_and_other_methods_none():
    post = Call(method="POST", path="/runs", read=nothing)
    assert post.key() != post.key()  # a fresh key per call, which every try of it reuses
    assert Call(method="POST", path="/runs", read=nothing, idempotency_key="k").key() == "k"
    assert Call(method="GET", path="/runs/r", read=nothing).key() is None


@pytest.mark.spec("C18 client-py-errors")
@given(
    code=st.sampled_from(sorted(BY_CODE)),
    request_id=st.from_regex(r"[A-Za-z0-9._:-]{1,40}", fullmatch=True),
)
def test_a_problem_becomes_the_class_named_by_its_code(code, request_id):
    body = (
        b'{"type": "urn:ecp:error:' + code.encode() + b'", "title": "t", "status": 418,'
        b' "detail": "d", "code": "' + code.encode() + b'",'
        b' "errors": [{"loc": ["body", 0, "x"], "msg": "bad"}]}'
    )
    raised = error(Answer(status=418, headers={"x-request-id": request_id}, content=body))
    assert type(raised) is BY_CODE[code]
    assert type(raised).__name__ == "".join(part.capitalize() for part in code.split("_"))
    assert (raised.status, raised.code, raised.request_id) == (418, code, request_id)
    assert [(e.loc, e.msg) for e in raised.errors] == [(("body", 0, "x"), "bad")]


def test_an_unknown_code_is_an_ecp_error_and_a_page_of_html_an_http_error():
    new = error(Answer(status=409, headers={}, content=b'{"code": "brand_new", "detail": "x"}'))
    assert type(new) is EcpError
    assert new.code == "brand_new"
    proxy = error(Answer(status=502, headers={}, content=b"<html>Bad gateway</html>"))
    assert type(proxy) is HttpError
    assert proxy.status == 502


def sign_service(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


secrets = st.one_of(
    st.binary(min_size=24, max_size=64).map(lambda k: "whsec_" + base64.b64encode(k).decode()),
    st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=16, max_size=40).filter(
        lambda s: not s.startswith("whsec_")
    ),
)


def key_of(secret: str) -> bytes:
    if secret.startswith("whsec_"):
        return base64.b64decode(secret.removeprefix("whsec_"))
    return secret.encode()


@pytest.mark.spec("C18 client-py-webhooks")
@given(
    secret=secrets,
    event=st.dictionaries(st.text(max_size=8), st.integers(), max_size=4),
    message_id=st.from_regex(r"[a-z0-9-]{1,36}", fullmatch=True),
    flip=st.integers(0, 10_000),
)
def test_a_signed_delivery_verifies_and_any_flipped_byte_is_refused(
    secret, event, message_id, flip
):
    body = json.dumps(event).encode()
    reference = Webhook(key_of(secret))  # the reference library, with the raw key
    signature = reference.sign(message_id, NOW, body.decode())
    headers = {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(NOW.timestamp())),
        "webhook-signature": signature,
        "X-Service-Signature": sign_service(key_of(secret), body),
    }
    assert verify(headers, body, secret, now=NOW.timestamp()) == event
    index = flip % len(body)
    tampered = body[:index] + bytes([body[index] ^ 1]) + body[index + 1 :]
    with pytest.raises(WebhookVerificationFailed):
        verify(headers, tampered, secret, now=NOW.timestamp())
    with pytest.raises(WebhookVerificationFailed):
        verify(headers, body, secret, now=NOW.timestamp() + 301)


def test_a_models_repr_leaves_out_lock_tokens_and_secrets():
    task = ClaimedTask(
        task_id="t-1",
        lock_token="token-value",
        run_id="r-1",
        node_id="n",
        attempt=1,
        topic="x",
        arguments={},
        state={},
        locked_until=NOW,
    )
    assert "token-value" not in repr(task)
    assert "t-1" in repr(task)
    view = SubscriptionView(
        subscription_id="s-1",
        tenant_id="t",
        deployment_ref="d",
        target_url="https://example.com",
        event_types=["run.started"],
        created_at=NOW,
    )
    created = SubscriptionCreated(subscription=view, secret="whsec_value")
    assert "whsec_value" not in repr(created)
    assert "s-1" in repr(created)
