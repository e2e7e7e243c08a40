"""The composition root: one reading of the settings, and the whole API on the memory store.

The memory store is real storage (``ecp_core.memory``), chosen by the root like PostgreSQL; the
requests go over HTTP through httpx's ASGI transport, the workers run as in production.
"""

import base64
from collections.abc import Iterator

import jwt
import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_http.cli import main
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.startup.bootstrap import load_settings
from ecp_http.startup.secrets import with_development_secrets

pytestmark = pytest.mark.integration

SECRET = "m" * 40
SEED = base64.b64encode(bytes(range(3, 35))).decode("ascii")


def settings(**changes) -> Settings:
    """Settings without a database URL: only the memory store can serve them."""
    return Settings(
        jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02, **changes
    )


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(settings(), storage=MemoryStore())) as test_client:
        yield test_client


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def test_a_run_goes_from_start_to_a_verified_chain_in_memory(client):
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code == 201
    deployment = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
    assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
    started = client.post(
        "/runs",
        json={"deployment_ref": "refunds", "input": {"order": "A-1"}},
        headers={**auth(), "Prefer": "wait=30"},  # the workers run: answered once it waits
    )
    assert started.status_code == 201, started.text
    run = started.json()
    assert run["status"] == "waiting_approval"
    approvals = client.get(f"/runs/{run['run_id']}/approvals?status=pending", headers=auth())
    [approval] = approvals.json()["approvals"]
    resolved = client.post(
        f"/deployments/refunds/approvals/{approval['approval_id']}/resolve",
        json={"decision": "approve"},
        headers=auth("approver"),
    )
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["run"]["status"] == "completed"
    verified = client.get(f"/runs/{run['run_id']}/audit/verify", headers=auth())
    assert verified.json()["verified"] is True
    page = client.get("/admin/runs?limit=1", headers=auth()).json()
    assert [listed["run_id"] for listed in page["runs"]] == [run["run_id"]]


def test_readiness_on_memory_has_no_schema_to_wait_for(client):
    answer = client.get("/health/ready")
    assert answer.status_code == 200, answer.text
    assert answer.json()["checks"] == {
        "schema": "current",
        "dispatcher": "running",
        "scheduler": "running",
    }


def test_the_query_models_refuse_on_memory_as_on_postgres(client):
    bad = client.get("/admin/runs?limit=%C2%B2", headers=auth())  # a superscript two
    assert bad.status_code == 422
    assert bad.json()["errors"] == [
        {"loc": ["query", "limit"], "msg": "must be a whole number from 1 to 500"}
    ]
    unknown = client.get("/admin/runs?colour=red", headers=auth())
    assert unknown.json()["code"] == "unknown_parameter"


def test_memory_tenants_do_not_see_each_other(client):
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code == 201
    other = client.get("/v1/graphs/refund-triage", headers=auth(tenant="globex"))
    assert other.status_code == 404


def test_postgres_is_the_default_storage_and_needs_a_url():
    with pytest.raises(SettingsError, match="ECP_DATABASE_URL"):
        create_app(settings())


def test_settings_are_read_from_the_injected_mapping_only(monkeypatch):
    monkeypatch.setenv("ECP_PORT", "1234")
    assert load_settings({"ECP_PORT": "4321"}).port == 4321
    assert load_settings({}).port == 8000
    assert load_settings().port == 1234  # the environment, when nothing is injected


def test_the_token_command_reads_the_injected_mapping(tmp_path, capsys):
    environ = {"ECP_DATA_DIR": str(tmp_path)}
    with_development_secrets(load_settings(environ))  # as `ecp serve` there made them
    assert main(["token", "--tenant", "t1", "--role", "viewer"], environ=environ) == 0
    token = capsys.readouterr().out.strip()
    secret = (tmp_path / "jwt-secret").read_text().strip()  # the server's development secret
    claims = jwt.decode(token, secret, algorithms=["HS256"])
    assert (claims["tenant_id"], claims["roles"]) == ("t1", ["viewer"])
    hosted = {**environ, "ECP_HOSTED": "true"}
    assert main(["token", "--tenant", "t1", "--role", "viewer"], environ=hosted) == 2
    assert "disabled" in capsys.readouterr().err
