"""Certifications over HTTP: the whole path on memory and PostgreSQL, refusals as problems.

A build is created, blocked, unblocked by real facts (a deployment, its policy, an attestation),
moved up the table to promoted and revoked. Refused moves, override limits, permissions and
tenants answer with RFC 9457 problems and change nothing.
"""

import base64
import urllib.parse
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "c" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")
BUILD = {
    "app_name": "shop",
    "app_commit": "abc123",
    "image_digest": "sha256:" + "a" * 64,
    "deployment_ref": "refunds",
}
GRAPH = {
    "graph_id": "pay",
    "entry": "charge",
    "nodes": [
        {"id": "charge", "kind": "action", "action": {"name": "echo", "fingerprint": "echo/1"}},
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "charge", "target": "done"}],
}


def auth(role="admin", tenant="acme", subject="developer"):
    token = mint_token(SECRET, tenant=tenant, roles=[role], subject=subject)
    return {"Authorization": f"Bearer {token}"}


def problem(answer, status, code):
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["code"] == code
    return answer.json()


def in_days(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


@pytest.fixture(params=["memory", "postgres"])
def client(request):
    if request.param == "memory":
        app = create_app(Settings(jwt_secret=SECRET, audit_signing_key=SEED), storage=MemoryStore())
    else:
        database = request.getfixturevalue("fresh_database")
        app = create_app(Settings(jwt_secret=SECRET, audit_signing_key=SEED, database_url=database))
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def memory_client():
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


def create(client, body=None, **headers):
    answer = client.post("/v1/certifications", json=body or BUILD, headers=headers or auth())
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def move(client, ident, headers=None, **body):
    return client.post(
        f"/v1/certifications/{ident}/transitions", json=body, headers=headers or auth()
    )


def make_ready(client):
    """A deployment of ``pay@1`` with a policy and an attestation of that version."""
    assert client.post("/v1/graphs", json=GRAPH, headers=auth()).status_code == 201
    deployment = {"deployment_ref": "refunds", "graph_id": "pay"}
    assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
    policy = client.put("/v1/deployments/refunds/policy", json={}, headers=auth())
    assert policy.status_code == 200, policy.text
    attestation = {
        "correlation_id": "release-1",
        "deployment_ref": "refunds",
        "graph_version": "pay@1",
        "adapter_version": "1.0",
        "inventory_fingerprint": "inv",
        "claimed_level": "l2",
    }
    submitted = client.post("/v1/attestations", json=attestation, headers=auth("operator"))
    assert submitted.status_code in (200, 201), submitted.text


@pytest.mark.spec(
    "§3.4 certification-states", "§3.4 certification-transitions", "§6.2 certification-events"
)
def test_a_build_goes_up_the_table_and_is_revoked(client):
    created = client.post("/v1/certifications", json=BUILD, headers=auth("operator"))
    assert created.status_code == 201, created.text
    body = created.json()
    ident = body["certification_id"]
    assert created.headers["Location"] == f"/v1/certifications/{ident}"
    assert body["state"] == "buildable"
    assert [b["code"] for b in body["evaluation"]["blockers"]] == ["deployment_missing"]
    refused = problem(move(client, ident, to="test_deployable"), 409, "certification_blocked")
    assert "buildable" in refused["detail"] and "test_deployable" in refused["detail"]

    make_ready(client)
    ready = client.get(f"/v1/certifications/{ident}", headers=auth("viewer")).json()
    assert ready["evaluation"]["production_ready"] is True, ready["evaluation"]
    operator = auth("operator")
    assert move(client, ident, operator, to="test_deployable").status_code == 200
    assert move(client, ident, operator, to="certified").status_code == 200
    problem(
        move(client, ident, operator, to="promoted", promotion_target_key="eu"), 403, "forbidden"
    )
    problem(move(client, ident, to="promoted"), 422, "validation_failed")
    promoted = move(client, ident, to="promoted", promotion_target_key="prod-eu")
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["promotion_target_key"] == "prod-eu"
    problem(move(client, ident, operator, to="revoked"), 422, "validation_failed")
    revoked = move(client, ident, operator, to="revoked", reason="CVE-2026-1")
    assert revoked.status_code == 200, revoked.text
    for to in ("buildable", "test_deployable", "certified", "promoted", "revoked"):
        extra = {"reason": "again"} if to == "revoked" else {}
        extra |= {"promotion_target_key": "k"} if to == "promoted" else {}
        refusal = problem(
            move(client, ident, to=to, **extra), 409, "certification_transition_not_allowed"
        )
        assert "from revoked to " + to in refusal["detail"]

    final = client.get(f"/v1/certifications/{ident}", headers=auth("approver")).json()
    assert final["state"] == "revoked"
    events = final["events"]
    assert [(e["event_type"], e["state"]) for e in events] == [
        ("created", "buildable"),
        ("transitioned", "test_deployable"),
        ("transitioned", "certified"),
        ("transitioned", "promoted"),
        ("transitioned", "revoked"),
    ]
    assert events[3]["promotion_target_key"] == "prod-eu"
    assert events[4]["reason"] == "CVE-2026-1"
    assert events[1]["actor_id"] == "developer"


@pytest.mark.spec("§3.4 certification-transitions", "§6.2 certification-events")
@pytest.mark.parametrize(
    ("to", "extra", "code"),
    [
        ("buildable", {}, "certification_transition_not_allowed"),
        ("certified", {}, "certification_transition_not_allowed"),
        ("promoted", {"promotion_target_key": "eu"}, "certification_transition_not_allowed"),
        ("test_deployable", {}, "certification_blocked"),
    ],
)
def test_refused_moves_from_buildable_change_nothing(memory_client, to, extra, code):
    ident = create(memory_client)["certification_id"]
    before = memory_client.get(f"/v1/certifications/{ident}", headers=auth()).json()
    problem(move(memory_client, ident, to=to, **extra), 409, code)
    after = memory_client.get(f"/v1/certifications/{ident}", headers=auth()).json()
    assert after == before


@pytest.mark.spec("§2.5 certification-override", "§2.5 certification-override-time-boxed")
@pytest.mark.parametrize(
    ("change", "subject", "valid"),
    [
        ({"reason": ""}, "developer", False),
        ({"reason": "x"}, "developer", True),
        ({"reason": "x" * 500}, "developer", True),
        ({"reason": "x" * 501}, "developer", False),
        ({}, "a" * 255, True),
        ({}, "a" * 256, False),
        ({"scopes": []}, "developer", False),
        ({"scopes": ["deployment_missing"]}, "developer", False),
        ({"scopes": ["policy_missing", "policy_missing"]}, "developer", False),
        ({"expires_at": "past"}, "developer", False),
        ({"expires_at": "over"}, "developer", False),
        ({"expires_at": "limit"}, "developer", True),
        ({"actor_id": "someone"}, "developer", False),
        ({"expires_at": "2030-01-01T00:00:00"}, "developer", False),
    ],
)
def test_override_limits(memory_client, change, subject, valid):
    ident = create(memory_client)["certification_id"]
    moments = {"past": in_days(-1 / 24), "over": in_days(30.01), "limit": in_days(29.99)}
    body = {"scopes": ["policy_missing"], "reason": "pilot", "expires_at": in_days(1), **change}
    body["expires_at"] = moments.get(body["expires_at"], body["expires_at"])
    answer = memory_client.put(
        f"/v1/certifications/{ident}/override", json=body, headers=auth(subject=subject)
    )
    after = memory_client.get(f"/v1/certifications/{ident}", headers=auth()).json()
    if not valid:
        problem(answer, 422, "validation_failed")
        assert answer.json()["errors"], answer.text
        assert after["override"] is None
        assert len(after["events"]) == 1
        return
    assert answer.status_code == 200, answer.text
    override = answer.json()["override"]
    assert override["actor_id"] == subject
    assert override["reason"] == body["reason"]
    granted = after["events"][-1]
    assert granted["event_type"] == "override_granted"
    assert granted["scopes"] == body["scopes"]
    assert granted["override_expires_at"] == override["expires_at"]


@pytest.mark.spec("§2.5 certification-override", "§2.5 certification-evaluation")
def test_an_override_waives_only_what_it_names_and_can_be_withdrawn(memory_client):
    make_ready(memory_client)
    ident = create(memory_client, {**BUILD, "deployment_ref": "later"})["certification_id"]
    problem(
        memory_client.delete(f"/v1/certifications/{ident}/override", headers=auth()),
        404,
        "not_found",
    )
    deployment = {"deployment_ref": "later", "graph_id": "pay"}
    assert memory_client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
    evaluation = memory_client.get(f"/v1/certifications/{ident}", headers=auth()).json()[
        "evaluation"
    ]
    assert [b["code"] for b in evaluation["blockers"]] == ["policy_missing", "attestation_missing"]
    assert evaluation["test_deployable"] is True
    body = {"scopes": ["policy_missing"], "reason": "pilot", "expires_at": in_days(1)}
    granted = memory_client.put(f"/v1/certifications/{ident}/override", json=body, headers=auth())
    evaluation = granted.json()["evaluation"]
    assert evaluation["override_active"] is True
    assert [b["code"] for b in evaluation["blockers"]] == ["attestation_missing"]
    assert evaluation["production_ready"] is False
    body["scopes"] = ["policy_missing", "attestation_missing"]
    regranted = memory_client.put(f"/v1/certifications/{ident}/override", json=body, headers=auth())
    assert regranted.json()["evaluation"]["production_ready"] is True
    withdrawn = memory_client.delete(f"/v1/certifications/{ident}/override", headers=auth())
    assert withdrawn.status_code == 200, withdrawn.text
    assert withdrawn.json()["override"] is None
    assert withdrawn.json()["evaluation"]["production_ready"] is False
    types = [e["event_type"] for e in withdrawn.json()["events"]]
    assert types == ["created", "override_granted", "override_granted", "override_withdrawn"]
    revoke = move(memory_client, ident, to="revoked", reason="stop")
    assert revoke.status_code == 200
    again = memory_client.put(f"/v1/certifications/{ident}/override", json=body, headers=auth())
    problem(again, 409, "certification_revoked")


@pytest.mark.spec("§2.5 certification-per-build")
def test_the_same_build_again_is_the_same_certification(memory_client):
    first = memory_client.post("/v1/certifications", json=BUILD, headers=auth())
    again = memory_client.post("/v1/certifications", json=BUILD, headers=auth("operator"))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["certification_id"] == first.json()["certification_id"]
    assert len(again.json()["events"]) == 1
    moved = {**BUILD, "deployment_ref": "elsewhere"}
    problem(memory_client.post("/v1/certifications", json=moved, headers=auth()), 409, "conflict")
    for bad in (
        {**BUILD, "image_digest": "latest"},
        {**BUILD, "extra": 1},
        {**BUILD, "app_name": ""},
    ):
        problem(
            memory_client.post("/v1/certifications", json=bad, headers=auth()),
            422,
            "validation_failed",
        )


@pytest.mark.spec("§5 tenant-isolation")
def test_tenants_never_see_each_other(memory_client):
    ident = create(memory_client)["certification_id"]
    other = auth(tenant="globex")
    item = f"/v1/certifications/{ident}"
    problem(memory_client.get(item, headers=other), 404, "not_found")
    problem(move(memory_client, ident, other, to="revoked", reason="x"), 404, "not_found")
    body = {"scopes": ["policy_missing"], "reason": "x", "expires_at": in_days(1)}
    problem(memory_client.put(f"{item}/override", json=body, headers=other), 404, "not_found")
    problem(memory_client.delete(f"{item}/override", headers=other), 404, "not_found")
    assert memory_client.get("/v1/certifications", headers=other).json()["certifications"] == []
    mine = memory_client.get(item, headers=auth()).json()
    assert mine["state"] == "buildable" and len(mine["events"]) == 1
    # the same build in another tenant is another certification
    theirs = create(memory_client, **other)
    assert theirs["certification_id"] != ident and theirs["tenant_id"] == "globex"


@pytest.mark.parametrize(
    ("role", "read", "write", "override"),
    [
        ("admin", 200, 201, 200),
        ("operator", 200, 201, 403),
        ("approver", 200, 403, 403),
        ("viewer", 200, 403, 403),
        ("analyst", 403, 403, 403),
        ("worker", 403, 403, 403),
    ],
)
def test_permissions(memory_client, role, read, write, override):
    ident = create(memory_client, {**BUILD, "app_commit": "seed"})["certification_id"]
    headers = auth(role)
    assert memory_client.get(f"/v1/certifications/{ident}", headers=headers).status_code == read
    assert memory_client.get("/v1/certifications", headers=headers).status_code == read
    assert (
        memory_client.post("/v1/certifications", json=BUILD, headers=headers).status_code == write
    )
    body = {"scopes": ["policy_missing"], "reason": "x", "expires_at": in_days(1)}
    put = memory_client.put(f"/v1/certifications/{ident}/override", json=body, headers=headers)
    assert put.status_code == override


def test_pages_and_filters(memory_client):
    idents = [
        create(
            memory_client, {**BUILD, "app_commit": f"c{n}", "app_name": "shop" if n % 2 else "cart"}
        )["certification_id"]
        for n in range(3)
    ]
    assert move(memory_client, idents[0], to="revoked", reason="old").status_code == 200
    first = memory_client.get("/v1/certifications?limit=2", headers=auth())
    body = first.json()
    assert [c["certification_id"] for c in body["certifications"]] == sorted(idents)[:2]
    assert 'rel="next"' in first.headers["Link"]
    rest = memory_client.get(
        "/v1/certifications?limit=2&cursor=" + urllib.parse.quote(body["next_cursor"]),
        headers=auth(),
    ).json()
    assert [c["certification_id"] for c in rest["certifications"]] == sorted(idents)[2:]
    assert rest["next_cursor"] is None
    revoked = memory_client.get("/v1/certifications?state=revoked", headers=auth()).json()
    assert [c["certification_id"] for c in revoked["certifications"]] == [idents[0]]
    shop = memory_client.get("/v1/certifications?app_name=shop", headers=auth()).json()
    assert [c["certification_id"] for c in shop["certifications"]] == [idents[1]]
    for query in ("state=done", "limit=0", "cursor=nope", "colour=red"):
        answer = memory_client.get(f"/v1/certifications?{query}", headers=auth())
        assert answer.status_code == 422, (query, answer.text)


def test_the_routes_are_in_the_openapi_document(memory_client):
    paths = memory_client.get("/openapi.json").json()["paths"]
    item = "/v1/certifications/{certification_id}"
    assert set(paths["/v1/certifications"]) == {"get", "post"}
    assert set(paths[item]) == {"get"}
    assert set(paths[f"{item}/transitions"]) == {"post"}
    assert set(paths[f"{item}/override"]) == {"put", "delete"}
    transition = paths[f"{item}/transitions"]["post"]
    assert {"403", "404", "409", "422"} <= set(transition["responses"])
