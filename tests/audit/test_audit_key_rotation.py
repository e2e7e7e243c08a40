"""A server whose audit key was rotated still verifies what the retired key signed."""

import base64

import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_core.signing import Ed25519Signer
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.startup.core_setup import retired_audit_keys

pytestmark = pytest.mark.integration

SECRET = "r" * 40
OLD = base64.b64encode(bytes(range(1, 33))).decode("ascii")
NEW = base64.b64encode(bytes(range(40, 72))).decode("ascii")
ADMIN = {"Authorization": f"Bearer {mint_token(SECRET, tenant='acme', roles=['admin'])}"}


def _public(seed: str) -> str:
    signer = Ed25519Signer.from_base64_seed(seed)
    return f"{signer.key_id}:{base64.b64encode(signer.public_key).decode('ascii')}"


def _server(store: MemoryStore, seed: str, retired: str | None = None) -> TestClient:
    settings = Settings(
        jwt_secret=SECRET,
        audit_signing_key=seed,
        audit_verification_keys=retired,
        dispatch_poll_seconds=0.02,
    )
    return TestClient(create_app(settings, storage=store))


def _verify(client: TestClient, run_id: str) -> dict[str, object]:
    answer = client.get(f"/runs/{run_id}/audit/verify", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_records_signed_before_a_rotation_verify_with_the_retired_key_listed():
    store = MemoryStore()
    with _server(store, OLD) as client:
        assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=ADMIN).status_code == 201
        deployment = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
        assert client.post("/v1/deployments", json=deployment, headers=ADMIN).status_code == 201
        started = client.post(
            "/runs",
            json={"deployment_ref": "refunds", "input": {"order": "A-1"}},
            headers={**ADMIN, "Prefer": "wait=30"},
        )
        run_id = started.json()["run_id"]
        assert _verify(client, run_id)["signature_verified"] is True
    with _server(store, NEW) as forgetful:  # rotated, the old key not listed
        assert _verify(forgetful, run_id)["signature_verified"] is False
    with _server(store, NEW, retired=_public(OLD)) as rotated:
        assert _verify(rotated, run_id)["signature_verified"] is True
        published = rotated.get("/v1/audit/signing-keys", headers=ADMIN).json()
        key_ids = {key["key_id"] for key in published["keys"]}
        assert Ed25519Signer.from_base64_seed(OLD).key_id in key_ids
        assert Ed25519Signer.from_base64_seed(NEW).key_id in key_ids


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("no-colon", "key_id:base64-public-key"),
        ("k1:not base64!", "not a base64 Ed25519 public key"),
        ("k1:" + base64.b64encode(b"short").decode(), "not a base64 Ed25519 public key"),
        ("current:" + base64.b64encode(bytes(32)).decode(), "given twice"),
    ],
)
def test_a_bad_retired_key_is_refused_naming_the_setting(value, says):
    with pytest.raises(SettingsError, match="ECP_AUDIT_VERIFICATION_KEYS") as refused:
        retired_audit_keys(value, "current")
    assert says in str(refused.value)
