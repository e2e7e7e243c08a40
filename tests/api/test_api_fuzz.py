"""Schemathesis against the ASGI app, driven by the app's own ``/openapi.json``.

Every operation gets a bounded number of generated requests as an admin of tenant ``fuzz``:
valid ones, and invalid ones where there is a body or a query to get wrong. Each answer must not
be a 5xx (except a documented 503, which ``/health/ready`` gives while workers are stopped), must
use a documented status code, and must match the schema documented for that status. Workers are
not started, so runs stay pending.

Schemathesis' own pytest integration (``schemathesis.pytest.from_fixture``) does not run under
pytest 9.2 (it sets ``Function._nodeid``), so each operation's strategy runs here under
``@given`` inside a subtest.

``test_strings_postgres_cannot_store_are_client_errors`` replays what the fuzzer found: strings
holding U+0000 (or a lone surrogate) reached PostgreSQL and the server answered 500.
"""

import base64
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

JWT_SECRET = "fuzz-" + "x" * 32
MAX_EXAMPLES = 15


def _settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(bytes(range(32, 64))).decode("ascii"),
        max_wait_seconds=0,
    )


def _headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(JWT_SECRET, tenant='fuzz', roles=['admin'])}"}


@pytest.fixture
def api_schema(fresh_database) -> Iterator[schemathesis.BaseSchema]:
    app = create_app(_settings(fresh_database), start_workers=False)
    config = schemathesis.Config.from_dict({"generation": {"max-examples": MAX_EXAMPLES}})
    try:
        # Schemathesis runs the app's lifespan on first use and keeps it up until told.
        yield schemathesis.openapi.from_asgi("/openapi.json", app, config=config)
    finally:
        asgi.shutdown_lifespans()  # the lifespan's shutdown closes the runtime's pool


def _modes(operation) -> list[GenerationMode]:
    """Invalid requests too, where there is a body or a query to get wrong."""
    raw = operation.definition.raw
    negatable = "requestBody" in raw or any(p["in"] == "query" for p in raw.get("parameters", []))
    return list(GenerationMode) if negatable else [GenerationMode.POSITIVE]


def _checks(operation) -> list:
    checks = [status_code_conformance, response_schema_conformance]
    if "503" not in operation.definition.raw["responses"]:  # a documented 503 is the contract
        checks.append(schemathesis.checks.not_a_server_error)
    return checks


def _fuzz(operation, mode: GenerationMode, headers: dict[str, str]) -> None:
    checks = _checks(operation)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def fuzz(case):
        case.call_and_validate(headers=headers, checks=checks)

    fuzz()


@pytest.mark.spec("C1 openapi")
def test_api_answers_as_documented(api_schema, subtests):
    headers = _headers()
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:
        for mode in _modes(operation):
            with subtests.test(msg=f"{operation.label} ({mode.value})"):
                _fuzz(operation, mode, headers)


GRAPH = {"graph_id": "g", "entry": "a", "nodes": [{"id": "a", "kind": "end"}]}
ACTION_WITH_NUL = (
    b'{"graph_id": "g2", "entry": "a", "nodes": [{"id": "a", "kind": "action", '
    b'"action": {"name": "echo", "fingerprint": "\\u0000"}}]}'
)


@pytest.mark.spec("C7 i-json")
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/contracts", b'{"name": "c", "json_schema": {"x": "\\u0000"}}'),
        ("POST", "/v1/contracts", b'{"name": "c\\u0000", "json_schema": {}}'),
        ("POST", "/v1/contracts", b'{"name": "\\ud800", "json_schema": {}}'),
        ("POST", "/runs", b'{"deployment_ref": "d", "input": {"k": "\\u0000"}}'),
        ("POST", "/runs", b'{"deployment_ref": "d", "thread_id": "t\\u0000"}'),
        ("POST", "/v1/graphs", ACTION_WITH_NUL),
        ("GET", "/runs/r%00", None),
        ("GET", "/deployments/d/audits?run_id=%00", None),
        ("PUT", "/v1/deployments/d%00/policy", b'{"deny_capabilities": []}'),
    ],
    ids=[
        "contract-schema-nul",
        "contract-name-nul",
        "contract-name-lone-surrogate",
        "run-input-nul",
        "run-thread-id-nul",
        "graph-action-fingerprint-nul",
        "run-id-path-nul",
        "audits-run-id-query-nul",
        "policy-ref-path-nul",
    ],
)
def test_strings_postgres_cannot_store_are_client_errors(fresh_database, method, path, body):
    """Found by the fuzzer: NUL (and lone surrogates in text columns) reach psycopg and give 500."""
    app = create_app(_settings(fresh_database), start_workers=False)
    headers = {**_headers(), "Content-Type": "application/json"}
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.post("/v1/graphs", json=GRAPH, headers=headers).status_code == 201
        deployment = {"deployment_ref": "d", "graph_id": "g"}
        assert client.post("/v1/deployments", json=deployment, headers=headers).status_code == 201
        response = client.request(method, path, content=body, headers=headers)
    assert response.status_code < 500, response.text
