"""Credentials, roles, tenant isolation, validation errors and the public routes over HTTP."""

import time

import jwt
import pytest
from tests.support.e2e import check, deploy, example_graph, problem, start
from tests.support.e2e_server import JWT_SECRET

pytestmark = pytest.mark.e2e


@pytest.mark.spec("C2 health-live", "C4 ed25519-signatures")
def test_health_and_signing_keys_are_public(ecp_server):
    client = ecp_server.client  # no credentials at all
    live = check(client.get("/health/live"), 200)
    assert live["status"] == "live"
    ready = check(client.get("/health/ready"), 200)
    assert ready == {
        "status": "ready",
        "checks": {"schema": "current", "dispatcher": "running", "scheduler": "running"},
    }
    keys = check(client.get("/v1/audit/signing-keys"), 200)["keys"]
    assert len(keys) >= 1
    assert keys[-1]["algorithm"] == "ed25519"


def _claims(**changes):
    now = int(time.time())
    claims = {"sub": "mallory", "tenant_id": "t", "roles": ["admin"], "iat": now, "exp": now + 600}
    claims.update(changes)
    return {key: value for key, value in claims.items() if value is not None}


BAD_CREDENTIALS = {
    "no header": {},
    "bearer without token": {"Authorization": "Bearer"},
    "not a JWT": {"Authorization": "Bearer not-a-token"},
    "basic scheme": {"Authorization": "Basic YWRtaW46YWRtaW4="},
    "token without scheme": {"Authorization": jwt.encode(_claims(), JWT_SECRET, algorithm="HS256")},
    "other secret": {
        "Authorization": "Bearer " + jwt.encode(_claims(), "x" * 40, algorithm="HS256")
    },
    "expired": {
        "Authorization": "Bearer "
        + jwt.encode(
            _claims(iat=int(time.time()) - 120, exp=int(time.time()) - 60),
            JWT_SECRET,
            algorithm="HS256",
        )
    },
    "no tenant_id": {
        "Authorization": "Bearer "
        + jwt.encode(_claims(tenant_id=None), JWT_SECRET, algorithm="HS256")
    },
    "no exp": {
        "Authorization": "Bearer " + jwt.encode(_claims(exp=None), JWT_SECRET, algorithm="HS256")
    },
    "unknown role": {
        "Authorization": "Bearer "
        + jwt.encode(_claims(roles=["superuser"]), JWT_SECRET, algorithm="HS256")
    },
    "alg none": {"Authorization": "Bearer " + jwt.encode(_claims(), None, algorithm="none")},
    "unknown API key": {"X-API-Key": "ecp_" + "0" * 64},
}


@pytest.mark.spec("§5 auth-methods", "C1 status-codes")
@pytest.mark.parametrize("headers", BAD_CREDENTIALS.values(), ids=BAD_CREDENTIALS.keys())
def test_missing_or_bad_credentials_are_401(ecp_server, headers):
    client = ecp_server.client
    for method, path, body in [
        ("GET", "/admin/runs", None),
        ("GET", "/runs/some-run", None),
        ("POST", "/runs", {"deployment_ref": "refunds"}),
        ("POST", "/v1/graphs", example_graph()),
    ]:
        response = client.request(method, path, json=body, headers=headers)
        problem(response, 401, "unauthenticated")
        assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.spec("§5 role-rules", "C1 status-codes")
def test_roles_without_the_permission_get_403(ecp_server, admin, tenant):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds")
    run_id, approval_id = run["run_id"], run["pending_approval_ids"][0]
    viewer = ecp_server.caller(tenant, "viewer")
    approver = ecp_server.caller(tenant, "approver")
    analyst = ecp_server.caller(tenant, "analyst")
    operator = ecp_server.caller(tenant, "operator")
    resolve_path = f"/deployments/refunds/approvals/{approval_id}/resolve"

    forbidden = [
        (viewer, "POST", "/runs", {"deployment_ref": "refunds"}),
        (viewer, "POST", resolve_path, {"decision": "approve"}),
        (viewer, "POST", "/v1/graphs", example_graph()),
        (viewer, "PUT", "/v1/deployments/refunds/policy", {"deny_capabilities": []}),
        (viewer, "GET", "/admin/runs", None),
        (approver, "POST", "/runs", {"deployment_ref": "refunds"}),
        (analyst, "POST", resolve_path, {"decision": "approve"}),
        (operator, "POST", resolve_path, {"decision": "approve"}),
        (operator, "GET", "/admin/runs", None),
    ]
    for caller, method, path, body in forbidden:
        response = caller.request(method, path, json=body)
        problem(response, 403, "forbidden")

    # Nothing happened: no run was started, the approval still waits.
    assert check(admin.get("/admin/runs"), 200)["total"] == 1
    assert check(viewer.get(f"/runs/{run_id}"), 200)["status"] == "waiting_approval"
    assert check(viewer.get(f"/runs/{run_id}/timeline"), 200)["entries"]
    # The roles that hold the permission may.
    answer = check(approver.post(resolve_path, json={"decision": "approve"}), 200)
    assert answer["run"]["status"] == "completed"
    assert answer["approval"]["resolution"]["actor"]["roles"] == ["approver"]
    check(operator.post("/runs", json={"deployment_ref": "refunds"}), 201)


@pytest.mark.spec("§5 tenant-isolation")
def test_another_tenants_run_is_404(ecp_server, admin):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds")
    run_id, approval_id = run["run_id"], run["pending_approval_ids"][0]
    other = ecp_server.caller("e2e-someone-else", "admin")

    for method, path, body in [
        ("GET", f"/runs/{run_id}", None),
        ("GET", f"/runs/{run_id}/approvals", None),
        ("GET", f"/runs/{run_id}/timeline", None),
        ("GET", f"/runs/{run_id}/audit/verify", None),
        ("POST", f"/runs/{run_id}/resume", {"value": 1}),
        ("POST", f"/deployments/refunds/approvals/{approval_id}/resolve", {"decision": "approve"}),
        ("POST", "/runs", {"deployment_ref": "refunds"}),
        ("GET", "/v1/deployments/refunds", None),
        ("GET", "/deployments/refunds/audits", None),
        ("GET", "/deployments/refunds/audits/verify", None),
    ]:
        response = other.request(method, path, json=body)
        problem(response, 404, "not_found")

    assert check(other.get("/admin/runs"), 200) == {"runs": [], "total": 0}

    # Even through a deployment of its own under the same ref, the approval stays out of reach.
    deploy(other, example_graph(), "refunds")
    response = other.post(
        f"/deployments/refunds/approvals/{approval_id}/resolve", json={"decision": "approve"}
    )
    problem(response, 404, "not_found")
    check(other.get("/deployments/refunds/audits/verify"), 200)
    assert check(other.get("/deployments/refunds/audits", params={"run_id": run_id}), 200) == {
        "deployment_ref": "refunds",
        "records": [],
    }
    # The owner's run is untouched.
    assert check(admin.get(f"/runs/{run_id}"), 200)["status"] == "waiting_approval"


@pytest.mark.spec("C1 status-codes")
def test_unknown_runs_and_approvals_are_404(admin):
    deploy(admin, example_graph(), "refunds")
    for method, path, body in [
        ("GET", "/runs/no-such-run", None),
        ("GET", "/runs/no-such-run/approvals", None),
        ("GET", "/runs/no-such-run/timeline", None),
        ("GET", "/runs/no-such-run/audit/verify", None),
        ("POST", "/runs/no-such-run/resume", {"value": 1}),
        (
            "POST",
            "/deployments/refunds/approvals/no-such-approval/resolve",
            {"decision": "approve"},
        ),
        ("POST", "/runs", {"deployment_ref": "no-such-deployment"}),
        ("GET", "/no/such/route", None),
    ]:
        problem(admin.request(method, path, json=body), 404, "not_found")


@pytest.mark.spec("§7 no-extras", "C1 field-locations")
def test_unknown_body_fields_are_422_listing_each_field(admin):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds")
    approval_id = run["pending_approval_ids"][0]

    response = admin.post(
        "/runs", json={"deployment_ref": "refunds", "urgency": 1, "callback": "x"}
    )
    body = problem(response, 422, "validation_failed")
    assert sorted(tuple(e["loc"]) for e in body["errors"]) == [("callback",), ("urgency",)]
    assert all(e["msg"] for e in body["errors"])

    response = admin.post(
        f"/deployments/refunds/approvals/{approval_id}/resolve",
        json={"decision": "approve", "comment": "ok", "approver": "me"},
    )
    body = problem(response, 422, "validation_failed")
    assert sorted(tuple(e["loc"]) for e in body["errors"]) == [("approver",), ("comment",)]

    graph = example_graph()
    graph["owner"] = "ops"
    graph["nodes"][0]["action"]["timeout"] = 5
    body = problem(admin.post("/v1/graphs", json=graph), 422, "validation_failed")
    locs = [tuple(e["loc"]) for e in body["errors"]]
    assert ("owner",) in locs
    assert ("nodes", 0, "action", "timeout") in locs

    response = admin.put(
        "/v1/deployments/refunds/policy",
        json={"deny_capabilities": ["network_write"], "mode": "strict"},
    )
    body = problem(response, 422, "validation_failed")
    assert [tuple(e["loc"]) for e in body["errors"]] == [("mode",)]

    # Invalid values are listed with their location too; the approval is still pending.
    response = admin.post(
        f"/deployments/refunds/approvals/{approval_id}/resolve",
        json={"decision": "maybe", "reason": ""},
    )
    body = problem(response, 422, "validation_failed")
    assert sorted(tuple(e["loc"]) for e in body["errors"]) == [("decision",), ("reason",)]
    assert check(admin.get(f"/runs/{run['run_id']}"), 200)["status"] == "waiting_approval"


@pytest.mark.spec("C1 status-codes")
def test_malformed_json_is_400(admin):
    response = admin.post(
        "/runs", content=b'{"deployment_ref": ', headers={"Content-Type": "application/json"}
    )
    problem(response, 400, "malformed_json")
