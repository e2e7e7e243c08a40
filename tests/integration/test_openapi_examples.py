"""The OpenAPI document's examples: recorded from real answers, valid, and on every operation.

The examples live beside the code that serves them (``ecp_http/api_examples``): a request body
the server accepted and the answer it gave, per operation. ``test_the_examples_are_answers_of_
today`` drives a server on the memory store through the scenario (``openapi_scenario*.py``:
the quickstart, then area by area) and compares each answer with its recorded example field
by field (values such as ids and times differ from run to run, the shape may not);
``ECP_RECORD_EXAMPLES=1`` writes the files afresh instead (ADR 0055).
"""

import base64
import json
import os
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import attrs
import jsonschema
import pytest
from starlette.testclient import TestClient
from tests.integration.openapi_scenario import QUICKSTART, Step
from tests.integration.openapi_scenario_areas import AREAS
from tests.integration.openapi_scenario_evidence import EVIDENCE
from tests.integration.openapi_scenario_webhooks import RECEIVER, WEBHOOKS
from tests.support.receiver import Receiver, receiver

from ecp_core.memory import MemoryStore
from ecp_http import api_examples
from ecp_http.app import create_app
from ecp_http.auth import mint_token
from ecp_http.handlers import all_operations
from ecp_http.openapi import build_document
from ecp_http.routing import Operation
from ecp_http.settings import Settings

pytestmark = pytest.mark.spec("C1 openapi-examples")

SECRET = "examples-" + "e" * 32
EXAMPLES = pathlib.Path(api_examples.__file__).parent
RECORD = os.environ.get("ECP_RECORD_EXAMPLES") == "1"
SCENARIO = [*QUICKSTART, *AREAS, *EVIDENCE, *WEBHOOKS]
EXAMPLE_TARGET = "https://hooks.example.com/ecp"
"""The webhook target the recorded examples show in place of the loopback receiver's URL."""


def _operations() -> dict[str, Operation]:
    every = all_operations(billing_enabled=True, identity_enabled=True)
    return {operation.operation_id: operation for operation in every}


def _takes_json(operation: Operation) -> bool:
    return operation.body is not None


def _answers_json(operation: Operation) -> bool:
    """Whether the success answer is a JSON model (not the document itself, nor text)."""
    return (
        operation.status != 204
        and operation.media_type == "application/json"
        and attrs.has(operation.response)
    )


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return build_document(all_operations(billing_enabled=True, identity_enabled=True))


@pytest.fixture(scope="module")
def target() -> Iterator[Receiver]:
    """A webhook receiver that refuses every delivery, so that one attempt makes a dead letter."""
    with receiver(default=500) as refusing:
        yield refusing


@pytest.fixture(scope="module")
def client(target) -> Iterator[TestClient]:
    settings = Settings(
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(7, 39))).decode("ascii"),
        dispatch_poll_seconds=0.02,
        webhook_max_attempts=1,
        webhook_allow_private_targets=True,  # the receiver is on 127.0.0.1
        webhook_poll_seconds=0.02,
    )
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


def _call(client: TestClient, operation: Operation, step: Step, ids: dict[str, Any]) -> Any:
    """Make the step's call (again, while its ``until`` does not hold yet) and check its status."""
    token = mint_token(SECRET, tenant="acme", roles=[step.role])
    deadline = time.monotonic() + 30
    while True:
        answer = client.request(
            operation.method,
            operation.path.format(**step.path(ids)),
            params=step.query,
            json=step.sent(ids),
            headers={"Authorization": f"Bearer {token}", **step.headers},
        )
        assert answer.status_code == operation.status, (step.operation_id, answer.text)
        if step.until is None or step.until(answer.json()) or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def _record(client: TestClient, target_url: str) -> dict[str, Any]:
    """Run the scenario; the request body and the answer of each step, by example name."""
    operations = _operations()
    ids: dict[str, Any] = {RECEIVER: target_url}
    recorded: dict[str, Any] = {}
    for step in SCENARIO:
        operation = operations[step.operation_id]
        body = step.sent(ids)
        answer = _call(client, operation, step, ids)
        if _answers_json(operation):
            ids.update(step.keep(answer.json()))
        if not step.record:
            continue
        if body is not None:
            recorded[f"{step.operation_id}.{api_examples.REQUEST}"] = body
        if _answers_json(operation):
            recorded[f"{step.operation_id}.{api_examples.RESPONSE}"] = answer.json()
    return recorded


def _shape(value: Any) -> Any:
    """The keys of every object (a list by its first item) and the JSON type of every leaf."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_the_examples_are_answers_of_today(client, target):
    recorded = _record(client, target.url)
    if RECORD:
        for name in api_examples.recorded() - set(recorded):
            (EXAMPLES / f"{name}.json").unlink()
        for name, value in recorded.items():
            text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
            text = text.replace(target.url, EXAMPLE_TARGET)
            (EXAMPLES / f"{name}.json").write_text(text, encoding="utf-8")
        pytest.skip("the examples were recorded afresh")
    assert set(recorded) == api_examples.recorded()
    for name, value in recorded.items():
        stored = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        assert _shape(stored) == _shape(value), name


def _validate(document: dict[str, Any], schema: dict[str, Any], value: Any) -> None:
    root = {**document, **schema}  # "#/components/..." refers into the document
    validator = jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())
    validator.validate(value)


def test_every_example_is_valid_against_its_schema(document):
    checked = 0
    for methods in document["paths"].values():
        for entry in methods.values():
            bodies = [*entry.get("requestBody", {}).get("content", {}).values()]
            bodies += [
                media
                for response in entry["responses"].values()
                for media in response.get("content", {}).values()
            ]
            for media in bodies:
                if "example" in media:
                    _validate(document, media["schema"], media["example"])
                    checked += 1
    assert checked >= len(api_examples.recorded())


NOT_YET_RECORDED = frozenset(
    {
        "backtests_request",
        "backtests_get",
        "backtests_list",
        "backtests_get_migration",
        "billing_checkout",
        "billing_merchant_webhook",
        "billing_portal",
        "cloud_auth_callback",
        "cloud_auth_refresh",
        "connectors_test",
    }
)
"""Operations the scenario does not reach yet: it grows, this list only shrinks (ADR 0055)."""


def test_every_operation_has_its_examples():
    operations = _operations()
    recorded = api_examples.recorded()
    missing = []
    for operation_id, operation in operations.items():
        wanted = [api_examples.REQUEST] if _takes_json(operation) else []
        wanted += [api_examples.RESPONSE] if _answers_json(operation) else []
        missing += [f"{operation_id}.{part}" for part in wanted]
    missing = [name for name in missing if name not in recorded]
    assert sorted({name.rpartition(".")[0] for name in missing}) == sorted(NOT_YET_RECORDED)
    assert {name.rpartition(".")[0] for name in recorded} <= operations.keys()  # no orphans
