"""The OpenAI-compatible and Anthropic adapters against the loopback stand-in provider.

Both wire formats: the answer, its usage and exact cost, the provider's request id; retries on
429 (then success) and 5xx (until exhausted), none on a timeout, a malformed answer or a 400.
stamina's testing mode removes the backoff waits (the retry count stays ours).
"""

import json
import logging
import os
from decimal import Decimal

import pytest
import stamina

from ecp_core.errors import ModelCallFailed, NotFound
from ecp_core.models.model import CallFailure, ChatMessage, ModelRequest
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.anthropic import API_VERSION
from ecp_http.outbound.model_calls.provider import RetryPolicy
from ecp_http.outbound.model_calls.providers import catalog_models
from ecp_http.outbound.model_calls.standin import ANTHROPIC_PATH, OPENAI_PATH, Reply, StandinModels

pytestmark = pytest.mark.integration

KEY = "sk-live-model-key-0123456789"
KINDS = ["openai", "anthropic"]


@pytest.fixture(autouse=True)
def no_backoff():
    with stamina.set_testing(True, attempts=10, cap=True):  # our 3 tries, no waiting
        yield


@pytest.fixture
def standin():
    with StandinModels(api_key=KEY) as models:
        yield models


def provider(standin, kind, *, key=KEY, **entry):
    catalog = {"m": standin.entry("m", provider=kind, secret_name="MODEL_KEY", **entry)}
    secrets = ActionSecrets({"MODEL_KEY": key} if key else {}, None)
    return catalog_models(catalog, secrets, policy=RetryPolicy(max_retry_after=5))


def ask(models, *, timeout=5.0, **options):
    messages = (
        ChatMessage(role="system", content="Answer briefly."),
        ChatMessage(role="user", content="What is 2 + 2?"),
    )
    request = ModelRequest(model_ref="m", messages=messages, max_tokens=64, **options)
    return models.call(request, timeout_seconds=timeout)


def failed(models, **options) -> ModelCallFailed:
    with pytest.raises(ModelCallFailed) as caught:
        ask(models, **options)
    assert KEY not in str(caught.value)
    return caught.value


@pytest.mark.spec("C13 model-catalog")
@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_has_its_text_usage_exact_cost_and_request_id(standin, kind):
    models = provider(standin, kind, input_price="0.15", output_price="0.6")
    standin.script("m", Reply("4", input_tokens=1234, output_tokens=56))
    answer = ask(models, temperature=0.0)
    assert answer.text == "4"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (1234, 56)
    assert answer.cost_usd == Decimal("0.0002187")  # (1234 * 0.15 + 56 * 0.6) / 10^6
    assert answer.provider_request_id.startswith("chatcmpl-" if kind == "openai" else "msg_")
    assert answer.finish_reason == ("stop" if kind == "openai" else "end_turn")
    [sent] = standin.received("m")
    assert sent.body["model"] == "m"
    assert sent.body["max_tokens"] == 64
    assert sent.body["temperature"] == 0.0


def test_the_openai_format_sends_a_bearer_key_and_every_message():
    with StandinModels(api_key=KEY) as standin:
        ask(provider(standin, "openai"))
        [sent] = standin.received("m")
    assert sent.path == OPENAI_PATH
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]
    assert sent.body["stream"] is False


def test_the_anthropic_format_sends_its_key_version_and_a_separate_system_prompt():
    with StandinModels(api_key=KEY) as standin:
        ask(provider(standin, "anthropic"))
        [sent] = standin.received("m")
    assert sent.path == ANTHROPIC_PATH
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == API_VERSION
    assert "authorization" not in sent.headers
    assert sent.body["system"] == "Answer briefly."
    assert sent.body["messages"] == [{"role": "user", "content": "What is 2 + 2?"}]


@pytest.mark.parametrize("kind", KINDS)
def test_a_429_is_retried_then_the_answer_counts(standin, kind):
    models = provider(standin, kind)
    standin.fail("m", 429, retry_after=1).script("m", "after the wait")
    answer = ask(models)
    assert answer.text == "after the wait"
    assert standin.calls("m") == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_429_asking_for_longer_than_the_policy_waits_ends_the_call_at_once(standin, kind):
    models = provider(standin, kind)
    standin.fail("m", 429, retry_after=3600)
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.RATE_LIMITED, 1)
    assert standin.calls("m") == 1


@pytest.mark.parametrize("kind", KINDS)
def test_5xx_answers_are_retried_until_the_tries_are_spent(standin, kind):
    models = provider(standin, kind)
    standin.fail("m", 500, times=2).fail("m", 503)
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.SERVER_ERROR, 3)
    assert "503" in str(failure)
    assert standin.calls("m") == 3
    standin.fail("m", 502).script("m", "recovered")
    assert ask(models).text == "recovered"


@pytest.mark.parametrize("kind", KINDS)
def test_a_provider_that_hangs_past_the_timeout_fails_with_timeout_and_no_retry(standin, kind):
    models = provider(standin, kind)
    standin.hang("m", 30)
    failure = failed(models, timeout=0.3)
    assert (failure.failure, failure.attempts) == (CallFailure.TIMEOUT, 1)
    assert standin.calls("m") == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"id": "x"}',
        json.dumps({"choices": [], "content": []}).encode(),  # no usage: never a zero cost
        json.dumps(
            {
                "choices": [{"message": {"content": "hi"}}],
                "content": [{"type": "text", "text": "hi"}],
                "usage": {
                    "prompt_tokens": -1,
                    "completion_tokens": 1,
                    "input_tokens": -1,
                    "output_tokens": 1,
                },
            }
        ).encode(),
        json.dumps(
            {
                "choices": [{"message": {"content": 7}}],
                "content": [{"type": "text", "text": 7}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            }
        ).encode(),
    ],
)
def test_a_malformed_answer_fails_as_malformed_without_a_retry(standin, kind, body):
    models = provider(standin, kind)
    standin.malformed("m", body)
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.MALFORMED, 1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_request_the_provider_refuses_is_not_retried(standin, kind, status):
    models = provider(standin, kind)
    standin.fail("m", status)
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.REFUSED, 1)
    assert standin.calls("m") == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_wrong_key_is_refused_and_never_shown(standin, kind, caplog):
    caplog.set_level(logging.DEBUG)
    models = provider(standin, kind, key="sk-wrong-key-999")
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.REFUSED, 1)
    assert "401" in str(failure)
    assert "sk-wrong-key-999" not in str(failure) + repr(models) + caplog.text


def test_a_missing_secret_fails_before_any_call(standin):
    models = provider(standin, "openai", key=None)
    failure = failed(models)
    assert (failure.failure, failure.attempts) == (CallFailure.REFUSED, 0)
    assert "MODEL_KEY" in str(failure)
    assert standin.calls() == 0


def test_an_unreachable_provider_is_retried_then_fails_as_unreachable():
    with StandinModels() as standin:
        entry = standin.entry("m")
    models = catalog_models({"m": entry}, ActionSecrets({}, None))
    failure = failed(models)  # the stand-in has stopped: nothing listens on its port
    assert (failure.failure, failure.attempts) == (CallFailure.UNREACHABLE, 3)


@pytest.mark.spec("C13 model-catalog")
def test_the_catalog_provider_routes_each_model_to_its_format_and_knows_only_its_models():
    with StandinModels() as standin:
        catalog = {
            "gpt": standin.entry("gpt", provider="openai"),
            "claude": standin.entry("claude", provider="anthropic"),
        }
        models = catalog_models(catalog, ActionSecrets({}, None))
        for ref in catalog:
            request = ModelRequest(
                model_ref=ref, messages=(ChatMessage(role="user", content="hi"),), max_tokens=8
            )
            models.call(request, timeout_seconds=5)
        assert standin.received("gpt")[0].path == OPENAI_PATH
        assert standin.received("claude")[0].path == ANTHROPIC_PATH
        assert set(models.catalog) == {"gpt", "claude"}
        unknown = ModelRequest(
            model_ref="other", messages=(ChatMessage(role="user", content="hi"),), max_tokens=8
        )
        with pytest.raises(NotFound):
            models.call(unknown, timeout_seconds=5)


# -- opt-in: a real OpenAI-compatible server (vLLM, Ollama, a LiteLLM proxy) -----------------


@pytest.mark.skipif(
    not os.environ.get("ECP_TEST_OPENAI_BASE_URL"),
    reason="set ECP_TEST_OPENAI_BASE_URL (and ECP_TEST_OPENAI_MODEL) to call a real server",
)
def test_a_real_openai_compatible_server_answers_with_usage_and_cost():
    from ecp_core.models.model import CatalogEntry, ProviderKind

    key = os.environ.get("ECP_TEST_OPENAI_API_KEY")
    entry = CatalogEntry(
        model_ref="real",
        provider=ProviderKind.OPENAI,
        model=os.environ.get("ECP_TEST_OPENAI_MODEL", "llama3.2"),
        base_url=os.environ["ECP_TEST_OPENAI_BASE_URL"].rstrip("/"),
        secret_name="REAL_KEY" if key else None,
        family="real",
        input_usd_per_million=Decimal(1),
        output_usd_per_million=Decimal(2),
    )
    models = catalog_models({"real": entry}, ActionSecrets({"REAL_KEY": key or ""}, None))
    request = ModelRequest(
        model_ref="real",
        messages=(ChatMessage(role="user", content="Say the word yes."),),
        max_tokens=16,
    )
    answer = models.call(request, timeout_seconds=120)
    assert answer.usage.input_tokens > 0
    assert answer.cost_usd == entry.cost(answer.usage)
    assert answer.cost_usd > 0
