"""The ``model_call`` built-in action in runs, through the API on the memory store.

The catalog file points at the loopback stand-in provider; the key is an ``ECP_SECRET_<NAME>``
setting. A run's call comes back in its state and audit record, and its measured cost reaches
the debugger by itself; a failed call fails the run with the failure kind and records nothing.
"""

import base64
import logging
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import stamina
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_core.memory.evidence import EXECUTIONS
from ecp_http.outbound.model_calls.standin import Reply, StandinModels
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.startup.bootstrap import load_settings

pytestmark = pytest.mark.integration

RULE = "C13 model-call-action"
KEY = "sk-live-model-key-abcdef0123456789"
JWT = "m" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")

CATALOG = """
[models."fast"]
provider = "openai"
model = "fast"
base_url = "{url}/v1"
secret_name = "MODEL_KEY"
family = "standin-openai"
input_usd_per_million = "0.15"
output_usd_per_million = 0.6

[models."careful"]
provider = "anthropic"
model = "careful"
base_url = "{url}"
secret_name = "MODEL_KEY"
family = "standin-anthropic"
input_usd_per_million = "3"
output_usd_per_million = "15"
"""


@pytest.fixture(autouse=True)
def no_backoff():
    with stamina.set_testing(True, attempts=10, cap=True):
        yield


@pytest.fixture
def standin():
    with StandinModels(api_key=KEY) as models:
        yield models


def settings_for(tmp_path, standin=None, **extra):
    env = {
        "ECP_JWT_SECRET": JWT,
        "ECP_AUDIT_SIGNING_KEY": SEED,
        "ECP_DISPATCH_POLL_SECONDS": "0.02",
        "ECP_SECRET_MODEL_KEY": KEY,
        "ECP_MODEL_CALL_TIMEOUT_SECONDS": "5",
        **extra,
    }
    if standin is not None:
        path = tmp_path / "models.toml"
        path.write_text(CATALOG.format(url=standin.url))
        env["ECP_MODEL_CATALOG"] = str(path)
    return load_settings(env)


@pytest.fixture
def client(tmp_path, standin):
    with TestClient(create_app(settings_for(tmp_path, standin), storage=MemoryStore())) as test:
        yield test


def auth(role="admin"):
    return {"Authorization": f"Bearer {mint_token(JWT, tenant='acme', roles=[role])}"}


def graph(model="fast", capabilities=("network_write", "external_api_call")) -> dict:
    return {
        "graph_id": "asker",
        "entry": "ask",
        "nodes": [
            {
                "id": "ask",
                "kind": "action",
                "action": {
                    "name": "model_call",
                    "fingerprint": "model_call/1",
                    "capability_refs": list(capabilities),
                    "arguments": {
                        "model": model,
                        "messages": [
                            {"role": "system", "content": "Answer with one word."},
                            {"role": "user", "content": "Capital of France?"},
                        ],
                        "max_tokens": 16,
                        "temperature": 0,
                    },
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "ask", "target": "done"}],
    }


def run_graph(client, definition, deployment_ref="ask-prod") -> dict:
    registered = client.post("/v1/graphs", json=definition, headers=auth())
    assert registered.status_code in (200, 201), registered.text
    deployment = {"deployment_ref": deployment_ref, "graph_id": definition["graph_id"]}
    assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
    started = client.post(
        "/runs",
        json={"deployment_ref": deployment_ref, "input": {"ticket": "T-1"}},
        headers={**auth(), "Prefer": "wait=30"},
    )
    assert started.status_code == 201, started.text
    return started.json()


def timeline(client) -> dict:
    now = datetime.now(UTC)
    params = {
        "workflow_id": "asker",
        "start": (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "end": (now + timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
    }
    answer = client.get("/v1/debugger/timeline", params=params, headers=auth())
    assert answer.status_code == 200, answer.text
    return answer.json()


def everything_written(client, run_id) -> str:
    reads = [f"/runs/{run_id}", f"/runs/{run_id}/timeline", "/deployments/ask-prod/audits"]
    texts = []
    for path in reads:
        answer = client.get(path, headers=auth())
        assert answer.status_code == 200, (path, answer.text)
        texts.append(answer.text)
    stored = client.app.state.runtime.ecp.runs.get("acme", run_id)
    return "\n".join([*texts, repr(stored), repr(client.app.state.runtime.settings)])


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("model", ["fast", "careful"])
def test_a_run_calls_a_model_and_its_measured_cost_reaches_the_debugger(
    client, standin, caplog, model
):
    caplog.set_level(logging.DEBUG)
    standin.script(model, Reply("Paris", input_tokens=1200, output_tokens=3))
    run = run_graph(client, graph(model))
    assert run["status"] == "completed", run
    expected = {"fast": Decimal("0.0001818"), "careful": Decimal("0.003645")}[model]
    output = run["output"]
    assert output["text"] == "Paris"
    assert output["usage"] == {"input_tokens": 1200, "output_tokens": 3}
    assert Decimal(output["cost_usd"]) == expected
    assert output["model"] == model
    assert output["provider_request_id"]
    [sent] = standin.received(model)
    assert sent.body["messages"][-1] == {"role": "user", "content": "Capital of France?"}

    audit = client.get(f"/runs/{run['run_id']}/timeline", headers=auth()).text
    assert "Paris" in audit
    assert output["provider_request_id"] in audit

    answer = timeline(client)
    totals = answer["totals"]
    assert (totals["events"], totals["runs"]) == (1, 1)
    assert Decimal(totals["measured_cost_usd"]) == expected
    assert Decimal(totals["estimated_cost_usd"]) == 0
    assert [row["workflow_version"] for row in answer["rows"]] == ["asker@1"]

    written = everything_written(client, run["run_id"])
    assert KEY not in written
    assert KEY not in caplog.text


@pytest.mark.spec(RULE)
def test_the_evidence_event_names_the_run_step_provider_model_and_tokens(client, standin):
    standin.script("fast", Reply("Paris", input_tokens=10, output_tokens=2))
    run = run_graph(client, graph("fast"))
    with client.app.state.runtime.store.unit_of_work() as uow:  # the memory store's own read
        [event] = uow.evidence.items(EXECUTIONS, "acme")
    assert (event.workflow_id, event.workflow_version) == ("asker", "asker@1")
    assert (event.run_id, event.step_id, event.attempt) == (run["run_id"], "ask", 1)
    assert event.cost_measurement == "measured"
    assert event.cost_usd == Decimal("0.0000027")
    assert event.charge_id == event.event_id
    assert event.dimensions == {"deployment_ref": "ask-prod"}
    assert event.metadata["provider"] == "openai"
    assert event.metadata["model"] == "fast"
    assert (event.metadata["input_tokens"], event.metadata["output_tokens"]) == (10, 2)
    assert event.metadata["provider_request_id"] == run["output"]["provider_request_id"]


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("script", "kind"),
    [
        (lambda s: s.fail("fast", 500, times=3), "server_error"),
        (lambda s: s.malformed("fast", b'{"choices": []}'), "malformed"),
        (lambda s: s.fail("fast", 400), "refused"),
        (lambda s: s.hang("fast", 30), "timeout"),
    ],
)
def test_a_failed_call_fails_the_run_with_its_kind_and_records_no_cost(
    tmp_path, standin, caplog, script, kind
):
    caplog.set_level(logging.DEBUG)
    settings = settings_for(tmp_path, standin, ECP_MODEL_CALL_TIMEOUT_SECONDS="0.3")
    with TestClient(create_app(settings, storage=MemoryStore())) as client:
        script(standin)
        run = run_graph(client, graph("fast"))
        assert run["status"] == "failed", run
        assert run["failure_state"]["reason"] == "action_error"
        assert run["failure_state"]["message"].startswith(f"action 'model_call' failed: {kind}:")
        audit = client.get(f"/runs/{run['run_id']}/timeline", headers=auth()).text
        assert f"{kind}: model 'fast'" in audit
        assert timeline(client)["totals"]["events"] == 0  # no zero-cost event
        assert KEY not in everything_written(client, run["run_id"]) + caplog.text


@pytest.mark.spec(RULE)
def test_a_model_outside_the_catalog_or_a_node_without_the_capabilities_fails(client, standin):
    run = run_graph(client, graph("unknown"))
    assert run["failure_state"]["message"].startswith("action 'model_call' failed: unknown_model")
    undeclared = graph(capabilities=())
    run = run_graph(client, undeclared, "undeclared")
    assert "undeclared_capabilities" in run["failure_state"]["message"]
    bad = graph()
    bad["nodes"][0]["action"]["arguments"]["max_tokens"] = 0
    run = run_graph(client, bad, "bad")
    assert "invalid_arguments: max_tokens" in run["failure_state"]["message"]
    assert standin.calls() == 0


@pytest.mark.spec(RULE, "C10 action-plugins")
def test_model_call_is_a_builtin_only_when_a_catalog_is_configured(tmp_path, client):
    listed = client.get("/v1/actions", headers=auth("viewer")).json()["actions"]
    [action] = [a for a in listed if a["name"] == "model_call"]
    assert action["source"] == "builtin"
    assert set(action["capability_refs"]) == {"network_write", "external_api_call"}
    schema = action["arguments_schema"]
    assert schema["required"] == ["model", "messages", "max_tokens"]
    assert schema["properties"]["messages"]["items"]["properties"]["role"]["enum"] == [
        "system",
        "user",
        "assistant",
    ]
    with TestClient(create_app(settings_for(tmp_path), storage=MemoryStore())) as plain:
        names = [a["name"] for a in plain.get("/v1/actions", headers=auth()).json()["actions"]]
    assert "model_call" not in names
