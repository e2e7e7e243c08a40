"""Over HTTP: a contract pattern RE2 cannot run is a 422 naming the field (ADR 0097)."""

import base64
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "p" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED)
    with TestClient(create_app(settings, storage=MemoryStore(), start_workers=False)) as test:
        yield test


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant='acme', roles=['admin'])}"}


@pytest.mark.spec("C19 linear-patterns")
def test_a_backreference_in_a_contract_is_a_422_naming_the_field(client: TestClient) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(a)\\1"}}}
    answer = client.post(
        "/v1/contracts", json={"name": "refund-edit", "json_schema": schema}, headers=auth()
    )
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    [error] = answer.json()["errors"]
    assert error["loc"] == ["json_schema", "properties", "code", "pattern"]
    assert "RE2" in error["msg"]
    assert client.get("/v1/contracts/refund-edit", headers=auth()).status_code == 404
    accepted = {"type": "string", "pattern": "^(a+)+$"}  # backtracks in re, linear in RE2
    answer = client.post(
        "/v1/contracts", json={"name": "evil", "json_schema": accepted}, headers=auth()
    )
    assert answer.status_code == 201, answer.text
