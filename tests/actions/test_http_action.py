"""The ``http_request`` action against real receivers on 127.0.0.1 (allowed by its setting).

The handler is called as the run step calls it; the end-to-end tests run it through the API on
the memory store, with the secret given as ``ECP_SECRET_<NAME>`` to the composition root.
"""

import base64
import json
import logging
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core.graphs.definition import ActionDescriptorV1
from ecp_core.memory import MemoryStore
from ecp_core.runs.run.actions import ActionContext
from ecp_http.config.action_secrets import REDACTED, ActionSecrets
from ecp_http.config.settings import Settings
from ecp_http.outbound.http_action import (
    CAPABILITIES,
    HttpRequestFailed,
    http_request_action,
    parse_arguments,
)
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.startup.bootstrap import load_settings

pytestmark = pytest.mark.integration

RULE = "C10 http-request-action"
SECRET_VALUE = "Bearer sk-live-0123456789abcdef"
JWT = "h" * 40
SEED = base64.b64encode(bytes(range(9, 41))).decode("ascii")


def handler(*, allow=True, max_bytes=1024, secrets=None, directory=None):
    settings = Settings(http_action_allow_private_targets=allow, http_action_max_bytes=max_bytes)
    return http_request_action(settings, ActionSecrets(secrets or {}, directory))


def call(action, arguments, *, capabilities=CAPABILITIES):
    descriptor = ActionDescriptorV1(
        name="http_request",
        fingerprint="http_request/1",
        arguments=arguments,
        capability_refs=capabilities,
    )
    context = ActionContext(
        run_id="r",
        tenant_id="acme",
        node_id="call",
        descriptor=descriptor,
        arguments=arguments,
        state={},
    )
    return action(context)


def failure(action, arguments, **options) -> HttpRequestFailed:
    with pytest.raises(HttpRequestFailed) as caught:
        call(action, arguments, **options)
    return caught.value


# -- one call -------------------------------------------------------------------------------


@pytest.mark.spec(RULE)
def test_a_json_answer_comes_back_as_json_and_the_json_body_is_sent():
    answer = {"ok": True, "id": 7, "items": ["a", "b"]}
    with receiver(
        reply_body=json.dumps(answer).encode(),
        reply_headers={"Content-Type": "application/json; charset=utf-8", "X-Trace": "t-1"},
    ) as target:
        output = call(handler(), {"method": "POST", "url": target.url, "json": {"order": "A-1"}})
    assert output["status"] == 200
    assert output["json"] == answer
    assert "text" not in output
    assert output["headers"]["x-trace"] == "t-1"
    [sent] = target.received
    assert sent.method == "POST"
    assert json.loads(sent.body) == {"order": "A-1"}
    assert sent.headers["content-type"] == "application/json"


@pytest.mark.spec(RULE)
def test_a_text_answer_comes_back_as_text_and_the_text_body_is_sent():
    with receiver(
        reply_body="plain café".encode(), reply_headers={"Content-Type": "text/plain"}
    ) as target:
        output = call(
            handler(),
            {
                "method": "PUT",
                "url": target.url,
                "text": "hello",
                "headers": {"X-Request": "1", "Content-Type": "text/csv"},
            },
        )
    assert output == {"status": 200, "headers": output["headers"], "text": "plain café"}
    [sent] = target.received
    assert (sent.method, sent.body) == ("PUT", b"hello")
    assert sent.headers["x-request"] == "1"
    assert sent.headers["content-type"] == "text/csv"  # the caller's own wins


@pytest.mark.spec(RULE)
def test_a_non_2xx_answer_fails_the_attempt_with_its_status():
    with receiver(default=503, reply_body=b"busy") as target:
        failed = failure(handler(), {"method": "GET", "url": target.url})
    assert failed.code == "http_status"
    assert "503" in str(failed)


@pytest.mark.spec(RULE)
def test_a_redirect_is_not_followed_but_fails_with_its_status():
    with receiver(default=302, reply_headers={"Location": "http://169.254.169.254/"}) as target:
        failed = failure(handler(), {"method": "GET", "url": target.url})
    assert failed.code == "http_status"
    assert "302" in str(failed)


@pytest.mark.spec(RULE)
def test_a_target_that_does_not_answer_in_time_fails_with_timeout():
    with receiver(hold=threading.Event()) as target:
        failed = failure(handler(), {"method": "GET", "url": target.url, "timeout_seconds": 0.2})
        assert target.received  # it was reached, and never answered
    assert failed.code == "timeout"


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("declare_length", [True, False])
def test_a_response_over_the_cap_fails_and_one_at_the_cap_passes(declare_length):
    action = handler(max_bytes=1000)
    with receiver(reply_body=b"x" * 1001, declare_length=declare_length) as target:
        failed = failure(action, {"method": "GET", "url": target.url})
    assert failed.code == "response_too_large"
    with receiver(reply_body=b"x" * 1000, declare_length=declare_length) as target:
        assert call(action, {"method": "GET", "url": target.url})["text"] == "x" * 1000


@pytest.mark.spec(RULE)
def test_loopback_and_private_targets_are_refused_unless_the_setting_allows_them():
    with receiver() as target:
        for url in (target.url, "http://10.0.0.1/hook", "http://[::ffff:127.0.0.1]:9/"):
            failed = failure(handler(allow=False), {"method": "GET", "url": url})
            assert failed.code == "target_refused"
            assert "ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS" in str(failed)
        assert target.received == []
        # Metadata addresses stay refused whatever the setting says.
        failed = failure(handler(allow=True), {"method": "GET", "url": "http://169.254.169.254/"})
        assert failed.code == "target_refused"
        assert call(handler(allow=True), {"method": "GET", "url": target.url})["status"] == 200


@pytest.mark.spec(RULE)
def test_a_node_that_does_not_declare_the_capabilities_cannot_call_out():
    with receiver() as target:
        failed = failure(handler(), {"method": "GET", "url": target.url}, capabilities=())
        assert target.received == []
    assert failed.code == "undeclared_capabilities"


@pytest.mark.spec(RULE)
def test_a_missing_secret_fails_before_anything_is_sent(tmp_path):
    arguments = {"secret_headers": {"Authorization": "API_TOKEN"}, "method": "GET"}
    with receiver() as target:
        failed = failure(handler(directory=tmp_path), {**arguments, "url": target.url})
        assert target.received == []
    assert failed.code == "secret_missing"
    assert "API_TOKEN" in str(failed)


@pytest.mark.spec(RULE)
def test_secrets_come_from_settings_or_files_and_are_sent_but_never_returned(tmp_path):
    (tmp_path / "file-token").write_text("from-a-file-0123456789\n")
    arguments = {
        "method": "GET",
        "secret_headers": {"Authorization": "API_TOKEN", "X-Other": "file-token"},
    }
    echoed = json.dumps({"saw": SECRET_VALUE, "also": "from-a-file-0123456789"}).encode()
    action = handler(secrets={"API_TOKEN": SECRET_VALUE}, directory=tmp_path)
    with receiver(
        reply_body=echoed,
        reply_headers={"Content-Type": "application/json", "X-Echo": SECRET_VALUE},
    ) as target:
        output = call(action, {**arguments, "url": target.url})
    [sent] = target.received
    assert sent.headers["authorization"] == SECRET_VALUE
    assert sent.headers["x-other"] == "from-a-file-0123456789"  # no trailing line break
    assert output["json"] == {"saw": REDACTED, "also": REDACTED}
    assert output["headers"]["x-echo"] == REDACTED


@pytest.mark.spec(RULE)
def test_a_secret_that_is_not_a_header_value_is_refused_without_showing_it():
    action = handler(secrets={"BAD": "line\r\nInjected: 1"})
    with receiver() as target:
        failed = failure(
            action,
            {"method": "GET", "url": target.url, "secret_headers": {"X-Key": "BAD"}},
        )
        assert target.received == []
    assert failed.code == "secret_invalid"
    assert "Injected" not in str(failed)


# -- the argument rules -------------------------------------------------------------------------

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_VALID_HEADER = st.from_regex(r"X-[A-Za-z0-9]{1,10}", fullmatch=True)
_VALUE = st.from_regex(r"[\x21-\x7e]([ -~]{0,20}[\x21-\x7e])?", fullmatch=True)


@st.composite
def valid_arguments(draw):
    arguments = {
        "method": draw(st.sampled_from(METHODS)),
        "url": "http://127.0.0.1:9/x",
    }
    if draw(st.booleans()):
        arguments["headers"] = draw(st.dictionaries(_VALID_HEADER, _VALUE, max_size=5))
    body = draw(st.sampled_from(["json", "text", None]))
    if body == "json":
        arguments["json"] = draw(st.dictionaries(st.text(max_size=5), st.integers(0, 9)))
    elif body == "text":
        arguments["text"] = draw(st.text(max_size=20).filter(lambda t: "\x00" not in t))
    if draw(st.booleans()):
        arguments["timeout_seconds"] = draw(
            st.floats(min_value=0.001, max_value=60) | st.integers(1, 60)
        )
    return arguments


_BREAKS = {
    "timeout too long": lambda d: {
        "timeout_seconds": d(st.floats(min_value=60.0001, max_value=1e9) | st.integers(61, 10**6))
    },
    "timeout not positive": lambda d: {
        "timeout_seconds": d(st.floats(max_value=0, allow_nan=False) | st.integers(-100, 0))
    },
    "timeout not a number": lambda d: {"timeout_seconds": d(st.sampled_from(["10", True, None]))},
    "method": lambda d: {"method": d(st.text(max_size=8).filter(lambda m: m not in METHODS))},
    "url scheme": lambda d: {
        "url": d(st.sampled_from(["ftp://127.0.0.1/", "file:///etc/passwd", "127.0.0.1", ""]))
    },
    "both bodies": lambda _: {"json": {"a": 1}, "text": "a"},
    "header name": lambda d: {"headers": {d(st.sampled_from(["a b", "x:y", "", "é"])): "v"}},
    "managed header": lambda d: {
        "headers": {d(st.sampled_from(["Host", "content-length", "Transfer-Encoding"])): "1"}
    },
    "header value": lambda d: {
        "headers": {"X-A": d(st.sampled_from(["a\r\nB: c", "a\nb", " lead", "trail ", "\x00"]))}
    },
    "too many headers": lambda d: {
        "headers": {f"X-{i}": "v" for i in range(d(st.integers(65, 80)))}
    },
    "secret name": lambda d: {
        "secret_headers": {"X-Key": d(st.sampled_from(["../etc", ".hidden", "a/b", "", "x" * 129]))}
    },
    "secret header twice": lambda _: {"headers": {"x-key": "v"}, "secret_headers": {"X-Key": "K"}},
    "unknown property": lambda d: {d(st.sampled_from(["body", "data", "follow_redirects"])): 1},
}


@pytest.mark.spec(RULE)
def test_any_arguments_outside_the_limits_are_refused_before_a_request_is_sent():
    action = handler(secrets={"K": "value"})
    with receiver() as target:

        @given(base=valid_arguments(), kind=st.sampled_from(sorted(_BREAKS)), data=st.data())
        def refused(base, kind, data):
            arguments = {**base, "url": target.url, **_BREAKS[kind](data.draw)}
            failed = failure(action, arguments)
            assert failed.code == "invalid_arguments", (kind, str(failed))
            assert target.received == []

        refused()


@pytest.mark.spec(RULE)
@given(arguments=valid_arguments())
def test_any_arguments_within_the_limits_are_accepted(arguments):
    parsed = parse_arguments(arguments)
    assert parsed.method == arguments["method"]
    assert parsed.timeout_seconds == arguments.get("timeout_seconds", 10)


# -- through the API -------------------------------------------------------------------------


def graph(url: str, **arguments) -> dict:
    return {
        "graph_id": "caller",
        "entry": "call",
        "nodes": [
            {
                "id": "call",
                "kind": "action",
                "action": {
                    "name": "http_request",
                    "fingerprint": "http_request/1",
                    "capability_refs": ["network_write", "external_api_call"],
                    "arguments": {"method": "POST", "url": url, **arguments},
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "call", "target": "done"}],
    }


def auth(role="admin"):
    return {"Authorization": f"Bearer {mint_token(JWT, tenant='acme', roles=[role])}"}


@pytest.fixture
def client():
    settings = load_settings(
        {
            "ECP_JWT_SECRET": JWT,
            "ECP_AUDIT_SIGNING_KEY": SEED,
            "ECP_DISPATCH_POLL_SECONDS": "0.02",
            "ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS": "true",
            "ECP_SECRET_API_TOKEN": SECRET_VALUE,
        }
    )
    assert SECRET_VALUE not in repr(settings)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


def run_graph(client, definition) -> dict:
    assert client.post("/v1/graphs", json=definition, headers=auth()).status_code == 201
    deployment = {"deployment_ref": "calls", "graph_id": definition["graph_id"]}
    client.post("/v1/deployments", json=deployment, headers=auth())
    started = client.post(
        "/runs",
        json={"deployment_ref": "calls", "input": {"order": "A-1"}},
        headers={**auth(), "Prefer": "wait=30"},
    )
    assert started.status_code == 201, started.text
    return started.json()


def everything_written(client, run_id) -> str:
    """The run, its timeline and the deployment's audits as the API shows them, and the store."""
    reads = [f"/runs/{run_id}", f"/runs/{run_id}/timeline", "/deployments/calls/audits"]
    texts = []
    for path in reads:
        answer = client.get(path, headers=auth())
        assert answer.status_code == 200, (path, answer.text)
        texts.append(answer.text)
    stored = client.app.state.runtime.ecp.runs.get("acme", run_id)
    return "\n".join([*texts, repr(stored)])


@pytest.mark.spec(RULE)
def test_a_run_calls_out_with_a_secret_that_never_reaches_state_audit_or_logs(client, caplog):
    caplog.set_level(logging.DEBUG)
    with receiver(
        reply_body=json.dumps({"echo": SECRET_VALUE, "ok": True}).encode(),
        reply_headers={"Content-Type": "application/json"},
    ) as target:
        definition = graph(target.url, json={"n": 1}, secret_headers={"Authorization": "API_TOKEN"})
        run = run_graph(client, definition)
    assert run["status"] == "completed", run
    [sent] = target.received
    assert sent.headers["authorization"] == SECRET_VALUE
    written = everything_written(client, run["run_id"])
    assert '"ok":true' in written.replace(" ", "")
    assert "API_TOKEN" in written  # the name is in the arguments, the value nowhere
    assert SECRET_VALUE not in written
    assert "sk-live" not in written
    assert caplog.records
    assert "sk-live" not in caplog.text


@pytest.mark.spec(RULE)
def test_a_failed_call_fails_the_run_with_action_error_naming_the_reason(client, caplog):
    caplog.set_level(logging.DEBUG)
    with receiver(default=500) as target:
        definition = graph(target.url, secret_headers={"Authorization": "API_TOKEN"})
        run = run_graph(client, definition)
    assert run["status"] == "failed"
    assert run["failure_state"]["reason"] == "action_error"
    assert "http_status" in run["failure_state"]["message"]
    assert "500" in run["failure_state"]["message"]
    timeline = client.get(f"/runs/{run['run_id']}/timeline", headers=auth()).text
    assert "http_status: the target answered 500" in timeline
    assert "sk-live" not in everything_written(client, run["run_id"])
    assert "sk-live" not in caplog.text


@pytest.mark.spec(RULE, "C10 action-plugins")
def test_the_server_lists_http_request_as_a_builtin_with_its_capabilities(client):
    listed = client.get("/v1/actions", headers=auth("viewer"))
    assert listed.status_code == 200, listed.text
    [action] = [a for a in listed.json()["actions"] if a["name"] == "http_request"]
    assert action["source"] == "builtin"
    assert action["fingerprint"] == "http_request/1"
    assert set(action["capability_refs"]) == {"network_write", "external_api_call"}
    schema = action["arguments_schema"]
    assert schema["required"] == ["method", "url"]
    assert schema["properties"]["timeout_seconds"]["maximum"] == 60
    assert schema["additionalProperties"] is False
