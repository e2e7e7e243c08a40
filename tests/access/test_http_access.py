"""Who may do what over HTTP: credentials, roles, tenant isolation, project API keys, bad bodies.

Everything goes through the ASGI app, on a fresh database and again on the memory store; workers
are not started, so runs move only when a test drives them.
"""

import base64
import secrets
import time
from collections.abc import Iterator

import jwt
import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_core.permissions import ROLE_PERMISSIONS, Permission
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

JWT_SECRET = "x" * 32
PROBLEM_JSON = "application/problem+json"


@pytest.fixture(params=["postgres", "memory"])
def client(request) -> Iterator[TestClient]:
    """The app on a fresh PostgreSQL database, and on the memory store (the root's two choices)."""
    memory = request.param == "memory"
    settings = Settings(
        database_url=None if memory else request.getfixturevalue("fresh_database"),
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
    )
    app = create_app(settings, start_workers=False, storage=MemoryStore() if memory else None)
    with TestClient(app) as test_client:
        yield test_client


def bearer(tenant="acme", *roles, secret=JWT_SECRET, ttl=600, subject="someone"):
    token = mint_token(
        secret, tenant=tenant, roles=list(roles or ["admin"]), subject=subject, ttl_seconds=ttl
    )
    return {"Authorization": f"Bearer {token}"}


def raw_token(claims):
    return {"Authorization": "Bearer " + jwt.encode(claims, JWT_SECRET, algorithm="HS256")}


def claims(**changes):
    now = int(time.time())
    found = {
        "sub": "someone",
        "tenant_id": "acme",
        "roles": ["admin"],
        "iat": now,
        "exp": now + 600,
    }
    found.update(changes)
    return {name: value for name, value in found.items() if value is not ...}


def assert_problem(response, status, code):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body = response.json()
    assert (body["status"], body["code"], body["type"]) == (status, code, f"urn:ecp:error:{code}")
    if status == 401:
        assert response.headers["www-authenticate"].startswith("Bearer")
    return body


def waiting_run(client, tenant="acme"):
    """A run of the example graph in ``tenant``, driven until it waits for its approval."""
    admin = bearer(tenant)
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=admin).status_code == 201
    deployment = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
    assert client.post("/v1/deployments", json=deployment, headers=admin).status_code == 201
    started = client.post(
        "/runs", json={"deployment_ref": "refunds", "input": {"order": "A-1"}}, headers=admin
    )
    assert started.status_code == 201, started.text
    run = client.app.state.runtime.ecp.runs.drive(tenant, started.json()["run_id"])
    assert run.public_status.value == "waiting_approval"
    return run.run_id, run.pending_approval_ids[0]


# 401 ----------------------------------------------------------------------------------------


@pytest.mark.spec("§5 auth-methods")
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/runs/r-1"), ("POST", "/v1/graphs"), ("GET", "/v1/api-keys"), ("GET", "/admin/runs")],
)
def test_missing_credentials_are_401(client, method, path):
    body = assert_problem(client.request(method, path), 401, "unauthenticated")
    assert body["title"] == "Unauthorized"


@pytest.mark.spec("C2 bearer-jwt")
@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer not-a-jwt"},
        {"Authorization": "Basic YWRtaW46YWRtaW4="},
        {"Authorization": "Token " + mint_token(JWT_SECRET, tenant="acme", roles=["admin"])},
        {"X-API-Key": "not-a-key"},
        {"X-API-Key": "ecp_aaaaaaaa_" + "A" * 43},
    ],
    ids=["empty", "not-a-jwt", "basic", "other-scheme", "malformed-key", "unknown-key"],
)
def test_malformed_credentials_are_401(client, headers):
    assert_problem(client.get("/runs/r-1", headers=headers), 401, "unauthenticated")


@pytest.mark.spec("C2 bearer-jwt")
def test_an_expired_token_is_401(client):
    assert_problem(client.get("/runs/r-1", headers=bearer(ttl=-30)), 401, "unauthenticated")


@pytest.mark.spec("C2 bearer-jwt")
def test_a_token_signed_with_another_secret_is_401(client):
    headers = bearer(secret="y" * 32)
    assert_problem(client.get("/runs/r-1", headers=headers), 401, "unauthenticated")


@pytest.mark.spec("C2 bearer-jwt")
def test_an_unsigned_token_is_401(client):
    token = jwt.encode(claims(), None, algorithm="none")
    headers = {"Authorization": f"Bearer {token}"}
    assert_problem(client.get("/runs/r-1", headers=headers), 401, "unauthenticated")


@pytest.mark.spec("C2 bearer-jwt", "§5 unknown-role-slug")
@pytest.mark.parametrize(
    "bad",
    [
        {"roles": ["admin", "owner"]},
        {"roles": ["superuser"]},
        {"roles": "admin"},
        {"tenant_id": ...},
        {"tenant_id": ""},
        {"tenant_id": 7},
        {"sub": ...},
        {"exp": ...},
        {"iat": ...},
    ],
    ids=[
        "unknown-role-among-known",
        "unknown-role",
        "roles-not-a-list",
        "no-tenant",
        "empty-tenant",
        "tenant-not-a-string",
        "no-sub",
        "no-exp",
        "no-iat",
    ],
)
def test_tokens_with_bad_claims_are_401(client, bad):
    assert_problem(
        client.get("/runs/r-1", headers=raw_token(claims(**bad))), 401, "unauthenticated"
    )


# 403 ----------------------------------------------------------------------------------------


@pytest.mark.spec("C1 status-codes")
@pytest.mark.parametrize(
    ("role", "method", "path", "body"),
    [
        ("viewer", "POST", "/v1/graphs", EXAMPLE_GRAPH),
        ("approver", "GET", "/v1/api-keys", None),
        ("operator", "POST", "/v1/api-keys", {"name": "ci", "role": "admin"}),
        ("analyst", "DELETE", "/v1/api-keys/aaaaaaaa", None),
        ("viewer", "POST", "/runs", {"deployment_ref": "refunds"}),
        ("analyst", "POST", "/runs", {"deployment_ref": "refunds"}),
        ("approver", "GET", "/runs/r-1/timeline", None),
        ("operator", "GET", "/admin/runs", None),
        ("viewer", "POST", "/deployments/refunds/approvals/a-1/resolve", {"decision": "approve"}),
    ],
)
def test_a_role_without_the_permission_is_403(client, role, method, path, body):
    response = client.request(method, path, json=body, headers=bearer("acme", role))
    assert_problem(response, 403, "forbidden")


@pytest.mark.spec("C1 status-codes")
def test_403_comes_before_the_body_is_read(client):
    response = client.post(
        "/v1/api-keys", content=b"{not json", headers={**bearer("acme", "viewer")}
    )
    assert_problem(response, 403, "forbidden")


# 404 across tenants -------------------------------------------------------------------------


@pytest.mark.spec("C2 permission-table")
def test_a_run_s_approvals_and_one_approval_are_read_under_one_rule(client):
    """An approval (its proposed payload too) is read by the same roles by id and by run."""
    run_id, approval_id = waiting_run(client, "acme")
    for role, granted in ROLE_PERMISSIONS.items():
        headers = bearer("acme", role)
        by_id = client.get(f"/v1/approvals/{approval_id}", headers=headers).status_code
        by_run = client.get(f"/runs/{run_id}/approvals", headers=headers).status_code
        expected = 200 if Permission.APPROVAL_READ in granted else 403
        assert (by_id, by_run) == (expected, expected), role


@pytest.mark.spec("§5 tenant-isolation")
def test_another_tenants_resources_are_404(client):
    run_id, approval_id = waiting_run(client, "acme")
    mine = bearer("acme")
    assert client.get(f"/runs/{run_id}", headers=mine).status_code == 200
    assert client.get(f"/runs/{run_id}/timeline", headers=mine).status_code == 200
    theirs = bearer("globex")
    for path in [
        f"/runs/{run_id}",
        f"/runs/{run_id}/approvals",
        f"/runs/{run_id}/timeline",
        f"/runs/{run_id}/audit/verify",
        "/v1/deployments/refunds",
        "/v1/graphs/refund-triage",
        "/deployments/refunds/audits",
        "/deployments/refunds/audits/verify",
    ]:
        assert_problem(client.get(path, headers=theirs), 404, "not_found")
    resolve = f"/deployments/refunds/approvals/{approval_id}/resolve"
    decision = {"decision": "approve"}
    assert_problem(client.post(resolve, json=decision, headers=theirs), 404, "not_found")
    resume = client.post(f"/runs/{run_id}/resume", json={"value": 1}, headers=theirs)
    assert_problem(resume, 404, "not_found")
    assert client.get("/admin/runs", headers=theirs).json() == {"runs": [], "total": 0}
    # The other tenant's own deployment of the same name does not reach acme's approval either.
    waiting_run(client, "globex")
    assert_problem(client.post(resolve, json=decision, headers=theirs), 404, "not_found")
    assert client.get(f"/runs/{run_id}", headers=mine).json()["status"] == "waiting_approval"
    resolved = client.post(resolve, json=decision, headers=bearer("acme", "approver"))
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["run"]["status"] == "completed"


# Project API keys ---------------------------------------------------------------------------


@pytest.mark.spec("§5 project-api-keys", "C2 api-key-header")
def test_an_api_key_authenticates_with_its_role_and_tenant_until_revoked(client):
    run_id, _ = waiting_run(client, "acme")
    admin = bearer("acme", subject="ana")
    created = client.post(
        "/v1/api-keys", json={"name": "dashboard", "role": "viewer"}, headers=admin
    )
    assert created.status_code == 201, created.text
    assert created.headers["cache-control"] == "no-store"
    body = created.json()
    key = body["key"]
    assert "key_hash" not in body
    assert key.startswith(body["fingerprint"] + "_")
    assert (body["tenant_id"], body["role"], body["created_by"], body["revoked_at"]) == (
        "acme",
        "viewer",
        "ana",
        None,
    )
    with_key = {"X-API-Key": key}
    assert client.get(f"/runs/{run_id}", headers=with_key).status_code == 200
    assert client.get(f"/runs/{run_id}/timeline", headers=with_key).status_code == 200
    assert_problem(
        client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=with_key), 403, "forbidden"
    )
    assert_problem(client.get("/v1/api-keys", headers=with_key), 403, "forbidden")

    listed = client.get("/v1/api-keys", headers=admin)
    assert listed.status_code == 200
    assert key not in listed.text
    assert "key_hash" not in listed.text
    assert "sha256" not in listed.text
    [view] = listed.json()["api_keys"]
    assert view == {name: value for name, value in body.items() if name != "key"}
    assert listed.json()["next_cursor"] is None

    revoked = client.delete(f"/v1/api-keys/{body['key_id']}", headers=admin)
    assert revoked.status_code == 200, revoked.text
    revoked_at = revoked.json()["revoked_at"]
    assert revoked_at is not None
    assert key not in revoked.text
    assert_problem(client.get(f"/runs/{run_id}", headers=with_key), 401, "unauthenticated")
    again = client.delete(f"/v1/api-keys/{body['key_id']}", headers=admin)
    assert again.status_code == 200
    assert again.json()["revoked_at"] == revoked_at
    assert (
        client.get("/v1/api-keys", headers=admin).json()["api_keys"][0]["revoked_at"] == revoked_at
    )


@pytest.mark.spec("§5 tenant-isolation")
def test_an_api_key_sees_only_its_own_tenant(client):
    run_id, _ = waiting_run(client, "acme")
    created = client.post(
        "/v1/api-keys", json={"name": "ops", "role": "operator"}, headers=bearer("globex")
    )
    key = {"X-API-Key": created.json()["key"]}
    assert_problem(client.get(f"/runs/{run_id}", headers=key), 404, "not_found")
    assert client.get("/admin/runs", headers=bearer("globex")).json()["total"] == 0
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=key).status_code == 201
    assert client.get("/v1/graphs/refund-triage", headers=bearer("globex")).status_code == 200
    assert client.get("/v1/api-keys", headers=bearer("acme")).json()["api_keys"] == []
    key_id = created.json()["key_id"]
    assert_problem(
        client.delete(f"/v1/api-keys/{key_id}", headers=bearer("acme")), 404, "not_found"
    )
    assert_problem(
        client.delete("/v1/api-keys/nosuchid", headers=bearer("globex")), 404, "not_found"
    )


@pytest.mark.spec("§5 project-api-keys")
def test_an_admin_api_key_can_manage_keys_and_a_key_wins_over_a_token(client):
    admin_key = client.post(
        "/v1/api-keys", json={"name": "automation", "role": "admin"}, headers=bearer("acme")
    ).json()
    with_key = {"X-API-Key": admin_key["key"]}
    made = client.post("/v1/api-keys", json={"name": "child", "role": "viewer"}, headers=with_key)
    assert made.status_code == 201
    assert made.json()["created_by"] == f"api-key:{admin_key['key_id']}"
    # X-API-Key is what the request is authenticated with when both are sent.
    both = {**bearer("acme", "viewer"), **with_key}
    assert client.get("/v1/api-keys", headers=both).status_code == 200
    # A wrong key is not rescued by a valid token beside it.
    wrong_key = {**bearer("acme", "admin"), "X-API-Key": made.json()["key"] + "x"}
    assert_problem(client.get("/v1/api-keys", headers=wrong_key), 401, "unauthenticated")


@pytest.mark.spec("C1 list-paging")
def test_api_key_listing_pages(client):
    admin = bearer("acme")
    made = [
        client.post("/v1/api-keys", json={"name": f"k{i}", "role": "viewer"}, headers=admin).json()
        for i in range(3)
    ]
    seen, cursor = [], None
    while True:
        query = {"limit": 2} if cursor is None else {"limit": 2, "cursor": cursor}
        page = client.get("/v1/api-keys", params=query, headers=admin).json()
        seen += [key["key_id"] for key in page["api_keys"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [key["key_id"] for key in made]
    for query in ({"limit": 0}, {"limit": 501}, {"limit": "many"}, {"cursor": "???"}):
        response = client.get("/v1/api-keys", params=query, headers=admin)
        assert_problem(response, 422, "validation_failed")


# 400 and 422 --------------------------------------------------------------------------------


@pytest.mark.spec("C1 status-codes")
@pytest.mark.parametrize("path", ["/v1/api-keys", "/v1/graphs", "/v1/deployments", "/runs"])
def test_a_malformed_json_body_is_400(client, path):
    response = client.post(
        path,
        content=b'{"name": "ci",',
        headers={**bearer("acme"), "Content-Type": "application/json"},
    )
    assert_problem(response, 400, "malformed_json")


@pytest.mark.spec("§7 no-extras", "C1 field-locations")
def test_unknown_fields_are_422_with_every_field_located(client):
    response = client.post(
        "/v1/api-keys",
        json={"name": "", "role": "owner", "key": "mine", "tenant_id": "globex"},
        headers=bearer("acme"),
    )
    body = assert_problem(response, 422, "validation_failed")
    located = sorted(tuple(error["loc"]) for error in body["errors"])
    assert located == [("key",), ("name",), ("role",), ("tenant_id",)]
    assert all(error["msg"] for error in body["errors"])
    assert client.get("/v1/api-keys", headers=bearer("acme")).json()["api_keys"] == []

    run = client.post(
        "/runs", json={"deployment_ref": "refunds", "inputs": {}, "urgency": 1}, headers=bearer()
    )
    body = assert_problem(run, 422, "validation_failed")
    assert sorted(tuple(error["loc"]) for error in body["errors"]) == [("inputs",), ("urgency",)]


def test_a_body_that_is_not_an_object_is_422(client):
    response = client.post("/v1/api-keys", json=["ci", "viewer"], headers=bearer("acme"))
    assert_problem(response, 422, "validation_failed")


@pytest.mark.spec("C7 i-json")
def test_text_postgres_cannot_store_is_a_client_error(client):
    admin = {**bearer("acme"), "Content-Type": "application/json"}
    for raw in (
        b'{"name": "c\\u0000i", "role": "viewer"}',
        b'{"name": "\\ud800", "role": "viewer"}',
    ):
        body = assert_problem(
            client.post("/v1/api-keys", content=raw, headers=admin), 422, "invalid_json_value"
        )
        assert [error["loc"] for error in body["errors"]] == [["name"]]
    assert_problem(client.delete("/v1/api-keys/abcd%00fgh", headers=admin), 404, "not_found")
