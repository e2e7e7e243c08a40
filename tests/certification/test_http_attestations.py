"""Attestations over HTTP (memory and PostgreSQL), and key rotation with tampered rows on PostgreSQL."""

import base64
from datetime import timedelta

import pytest
from starlette.testclient import TestClient

from ecp_core.attestations.model import AttestationSubmission
from ecp_core.memory import MemoryStore
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.samples import NOW
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "a" * 40
SEED = base64.b64encode(bytes(range(3, 35))).decode("ascii")
BODY = {
    "correlation_id": "trace-7f3a",
    "deployment_ref": "refunds",
    "graph_version": "refund-triage@2",
    "adapter_version": "langgraph-adapter/0.9",
    "inventory_fingerprint": "sha256:" + "0f" * 32,
    "claimed_level": "L2",
}


def auth(role="operator", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


@pytest.fixture(params=["memory", "postgres"])
def client(request, tmp_path):
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, data_dir=tmp_path)
    if request.param == "memory":
        app = create_app(settings, start_workers=False, storage=MemoryStore())
    else:
        url = request.getfixturevalue("fresh_database")
        app = create_app(
            Settings(
                jwt_secret=SECRET, audit_signing_key=SEED, data_dir=tmp_path, database_url=url
            ),
            start_workers=False,
        )
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.spec("§2.4 attestation-first-write-wins", "§2.4 attestation-verification")
def test_submit_replay_conflict_read_and_verify(client):
    """201 new, 200 replayed or conflict naming the one in force; read and verify it."""
    created = client.post("/v1/attestations", json=BODY, headers=auth())
    assert created.status_code == 201, created.text
    ack = created.json()
    assert set(ack) == {"correlation_id", "authoritative", "status", "digest", "expires_at"}
    assert (ack["authoritative"], ack["status"]) == (True, "accepted")
    replay = client.post("/v1/attestations", json=BODY, headers=auth("admin"))
    assert replay.status_code == 200
    assert replay.json() == {**ack, "status": "replayed"}
    other = client.post("/v1/attestations", json={**BODY, "claimed_level": "L3"}, headers=auth())
    assert other.status_code == 200
    assert other.json() == {**ack, "authoritative": False, "status": "conflict"}
    read = client.get("/v1/attestations/trace-7f3a", headers=auth("viewer")).json()
    assert {k: read[k] for k in BODY} == BODY
    assert (read["digest"], read["expires_at"], read["in_force"]) == (
        ack["digest"],
        ack["expires_at"],
        True,
    )
    assert read["signing_key_id"].startswith("ed25519:")
    verified = client.get(
        "/v1/attestations/trace-7f3a/verify",
        params={**BODY, "digest": ack["digest"]},
        headers=auth("viewer"),
    )
    assert verified.json() == {
        "verified": True,
        "digest_verified": True,
        "signature_verified": True,
        "signing_key_id": read["signing_key_id"],
        "mismatches": [],
    }
    differs = client.get(
        "/v1/attestations/trace-7f3a/verify",
        params={
            "claimed_level": "L3",
            "adapter_version": "",
            "graph_version": BODY["graph_version"],
        },
        headers=auth("viewer"),
    ).json()
    assert differs["mismatches"] == ["adapter_version", "claimed_level"]
    assert differs["verified"] is False


@pytest.mark.spec("§2.4 attestation-first-write-wins", "§5 tenant-isolation")
def test_another_tenants_correlation_is_404_and_independent(client):
    """globex cannot read or verify acme's attestation; its own of the same id is its own."""
    client.post("/v1/attestations", json=BODY, headers=auth())
    for path in ("/v1/attestations/trace-7f3a", "/v1/attestations/trace-7f3a/verify"):
        answer = client.get(path, headers=auth("viewer", tenant="globex"))
        assert answer.status_code == 404
        assert answer.json()["code"] == "not_found"
    theirs = client.post("/v1/attestations", json=BODY, headers=auth(tenant="globex"))
    assert (theirs.status_code, theirs.json()["authoritative"]) == (201, True)


@pytest.mark.spec("§2.4 attestation-first-write-wins", "§7 no-extras")
@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"signature": "client-signed"}, "signature"),
        ({"issued_at": "2026-01-01T00:00:00Z"}, "issued_at"),
        ({"correlation_id": ""}, "correlation_id"),
        ({"correlation_id": "a/b"}, "correlation_id"),
        ({"deployment_ref": ""}, "deployment_ref"),
        ({"claimed_level": 2}, "claimed_level"),
        ({"graph_version": None}, "graph_version"),
    ],
)
def test_invalid_submissions_are_422_and_store_nothing(client, change, loc):
    """Unknown properties (a client signature or time among them), empty ids, non-strings."""
    answer = client.post("/v1/attestations", json={**BODY, **change}, headers=auth())
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert [loc] in [error["loc"] for error in answer.json()["errors"]]
    assert client.get("/v1/attestations/trace-7f3a", headers=auth()).status_code == 404


@pytest.mark.spec("§2.4 attestation-first-write-wins")
@pytest.mark.parametrize("field", sorted(BODY))
def test_every_field_is_required(client, field):
    """All six strings are required."""
    body = {k: v for k, v in BODY.items() if k != field}
    answer = client.post("/v1/attestations", json=body, headers=auth())
    assert answer.status_code == 422
    assert [field] in [error["loc"] for error in answer.json()["errors"]]


def test_permissions_and_parameters(client):
    """Submitting needs attestation_submit (viewers and workers are 403), reading audit_read."""
    assert client.post("/v1/attestations", json=BODY).status_code == 401
    for role in ("viewer", "analyst", "approver", "worker"):
        assert client.post("/v1/attestations", json=BODY, headers=auth(role)).status_code == 403
    client.post("/v1/attestations", json=BODY, headers=auth())
    assert client.get("/v1/attestations/trace-7f3a", headers=auth("worker")).status_code == 403
    unknown = client.get("/v1/attestations/trace-7f3a/verify?colour=blue", headers=auth())
    assert (unknown.status_code, unknown.json()["code"]) == (422, "unknown_parameter")
    assert client.get("/v1/attestations/nope/verify", headers=auth()).status_code == 404


def test_the_routes_are_in_the_openapi_document(client):
    """Each route with its models, permission and statuses."""
    paths = client.get("/openapi.json").json()["paths"]
    post = paths["/v1/attestations"]["post"]
    assert {"201", "200", "401", "403", "422"} <= set(post["responses"])
    assert "attestation_submit" in post["description"]
    verify = paths["/v1/attestations/{correlation_id}/verify"]["get"]
    names = {p["name"] for p in verify["parameters"]}
    assert names == {"correlation_id", *BODY, "digest"}
    assert "/v1/attestations/{correlation_id}" in paths


@pytest.mark.spec("§2.4 attestation-verification")
def test_rotation_and_tampering_on_postgres(postgres_store):
    """Key 1 signs; after rotating to key 2 (key 1 retired) it verifies; tampered rows do not."""
    key_1 = Ed25519Signer(bytes(range(40, 72)), "key-1")
    key_2 = Ed25519Signer(bytes(range(80, 112)), "key-2")
    clock = FixedClock(NOW)
    before = Ecp.build(postgres_store.unit_of_work, signer=key_1, clock=clock)
    for correlation in ("c-1", "c-2", "c-3"):
        before.attestations.submit(
            "acme", AttestationSubmission(**{**BODY, "correlation_id": correlation})
        )
    after = Ecp.build(
        postgres_store.unit_of_work,
        signer=key_2,
        clock=clock,
        verification_keys=[key_1.published()],
    )
    intact = after.attestations.verify("acme", "c-1", {})
    assert (intact.verified, intact.signature_verified, intact.signing_key_id) == (
        True,
        True,
        "key-1",
    )
    fresh = after.attestations.submit(
        "acme", AttestationSubmission(**{**BODY, "correlation_id": "c-4"})
    )
    assert after.attestations.verify("acme", "c-4", {"digest": fresh.digest}).signing_key_id == (
        "key-2"
    )
    with postgres_store.pool.connection() as conn:
        conn.execute(
            "UPDATE ecp_attestations SET claimed_level = 'L4' WHERE correlation_id = 'c-2'"
        )
        transplanted = after.attestations.get("acme", "c-1").signature  # valid, for c-1
        conn.execute(
            "UPDATE ecp_attestations SET signature = %s WHERE correlation_id = 'c-3'",
            (transplanted,),
        )
    changed = after.attestations.verify("acme", "c-2", {})
    assert (changed.verified, changed.digest_verified, changed.signature_verified) == (
        False,
        False,
        True,
    )
    resigned = after.attestations.verify("acme", "c-3", {})
    assert (resigned.verified, resigned.digest_verified, resigned.signature_verified) == (
        False,
        True,
        False,
    )
    clock.advance(timedelta(minutes=15).total_seconds())
    assert after.attestations.verify("acme", "c-1", {}).mismatches == ("expired",)
