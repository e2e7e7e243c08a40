"""The transparency log over HTTP: checkpoint, keys, proofs, tiles and a run's bundle.

Runs on the memory store with the server's own log thread (checkpoints every 50 ms); every proof
served is checked here with the project's verifier against the served, signed checkpoint.
"""

import base64
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.support.console import WAIT, bearer, console_client, deployed, waiting_run

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import EMPTY_ROOT, leaf_hash, verify_consistency, verify_inclusion
from ecp_core.transparency.model import leaf_entry
from ecp_core.transparency.notes import NoteKey, parse_note

pytestmark = pytest.mark.integration

ADMIN = bearer("acme", "admin")
DECIDE = {"decision": "approve"}


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client(log_checkpoint_seconds=0.05, log_origin="log.test")


def finished_run(client: TestClient) -> tuple[str, list[dict]]:
    run_id, approval_id = waiting_run(client, ADMIN, "pay")
    path = f"/deployments/pay/approvals/{approval_id}/resolve"
    assert client.post(path, json=DECIDE, headers={**ADMIN, **WAIT}).status_code == 200
    entries = client.get(f"/runs/{run_id}/timeline", headers=ADMIN).json()["entries"]
    return run_id, entries


def checkpoint(client: TestClient, size: int, headers: dict[str, str] = ADMIN) -> Checkpoint:
    """The served checkpoint once it covers ``size`` leaves, its signature verified."""
    keys = client.get("/v1/log/keys", headers=headers).json()["keys"]
    key = NoteKey.from_vkey(keys[0]["vkey"])
    deadline = time.monotonic() + 10
    while True:
        answer = client.get("/v1/log/checkpoint", headers=headers)
        assert answer.headers["content-type"] == "text/plain; charset=utf-8"
        note = parse_note(answer.text)
        assert note.verified_by(key) == 0
        found = Checkpoint.parse(note.text)
        if found.size >= size or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def leaf(entry: dict) -> bytes:
    return leaf_hash(leaf_entry(entry["record_digest"]))


def hashes(found: list[str]) -> list[bytes]:
    return [base64.b64decode(h) for h in found]


@pytest.mark.spec("C16 log-proofs")
def test_every_record_is_proved_in_the_signed_checkpoint_and_trees_are_consistent(client):
    deployed(client, ADMIN, "pay")
    _, first = finished_run(client)
    older = checkpoint(client, len(first))
    assert (older.origin, older.size) == ("log.test/acme", len(first))
    _, second = finished_run(client)
    newer = checkpoint(client, len(first) + len(second))
    assert newer.size == len(first) + len(second)
    for entry in first + second:
        query = {"audit_id": entry["audit_id"]}
        proof = client.get("/v1/log/proof/inclusion", params=query, headers=ADMIN).json()
        assert proof["tree_size"] == newer.size
        assert verify_inclusion(
            leaf(entry), proof["leaf_index"], newer.size, hashes(proof["hashes"]), newer.root
        )
    at_older = client.get(
        "/v1/log/proof/inclusion",
        params={"audit_id": first[0]["audit_id"], "tree_size": older.size},
        headers=ADMIN,
    ).json()
    assert verify_inclusion(
        leaf(first[0]), at_older["leaf_index"], older.size, hashes(at_older["hashes"]), older.root
    )
    span = {"from": older.size, "to": newer.size}
    proof = client.get("/v1/log/proof/consistency", params=span, headers=ADMIN).json()
    assert verify_consistency(
        older.size, newer.size, hashes(proof["hashes"]), older.root, newer.root
    )


@pytest.mark.spec("C16 log-tiles")
def test_tiles_are_served_at_their_c2sp_paths(client):
    deployed(client, ADMIN, "pay")
    _, entries = finished_run(client)
    size = checkpoint(client, len(entries)).size
    tile = client.get(f"/v1/log/tile/0/000.p/{size}", headers=ADMIN)
    assert tile.status_code == 200
    assert tile.headers["content-type"] == "application/octet-stream"
    assert tile.content == b"".join(leaf(entry) for entry in entries)
    shorter = client.get("/v1/log/tile/0/000.p/1", headers=ADMIN)
    assert shorter.content == leaf(entries[0])
    for missing in (f"0/000.p/{size + 1}", "0/000", "1/000.p/1", "0/001.p/1", "0/0", "x/000"):
        answer = client.get(f"/v1/log/tile/{missing}", headers=ADMIN)
        assert answer.status_code == 404, missing
        assert answer.headers["content-type"] == "application/problem+json"


@pytest.mark.spec("C16 log-bundle")
def test_a_run_s_bundle_proves_each_of_its_records(client):
    deployed(client, ADMIN, "pay")
    run_id, entries = finished_run(client)
    bundle = client.get(f"/runs/{run_id}/audit/bundle", headers=ADMIN).json()
    assert bundle["format"] == "ecp-audit-bundle/1"
    assert bundle["run_status"] == "completed"
    assert [r["audit_id"] for r in bundle["records"]] == [e["audit_id"] for e in entries]
    key = NoteKey.from_vkey(bundle["log_keys"][0]["vkey"])
    note = parse_note(bundle["checkpoint"])
    assert note.verified_by(key) == 0
    head = Checkpoint.parse(note.text)
    assert head.size == bundle["tree_size"]
    for record, proof in zip(bundle["records"], bundle["inclusion"], strict=True):
        assert proof["audit_id"] == record["audit_id"]
        assert verify_inclusion(
            leaf(record), proof["leaf_index"], head.size, hashes(proof["hashes"]), head.root
        )


@pytest.mark.spec("C16 log-tenants")
def test_a_tenant_sees_only_its_own_log(client):
    deployed(client, ADMIN, "pay")
    _, entries = finished_run(client)
    checkpoint(client, len(entries))
    other = bearer("globex", "viewer")
    empty = checkpoint(client, 0, other)
    assert (empty.origin, empty.size, empty.root) == ("log.test/globex", 0, EMPTY_ROOT)
    query = {"audit_id": entries[0]["audit_id"]}
    answer = client.get("/v1/log/proof/inclusion", params=query, headers=other)
    assert answer.status_code == 404
    assert client.get("/v1/log/tile/0/000.p/1", headers=other).status_code == 404
    assert client.get("/v1/log/checkpoint", headers=bearer("acme", "worker")).status_code == 403


@pytest.mark.spec("C16 log-proofs")
def test_sizes_beyond_the_log_and_backwards_spans_are_422(client):
    deployed(client, ADMIN, "pay")
    _, entries = finished_run(client)
    size = checkpoint(client, len(entries)).size
    for params in ({"from": size, "to": size + 1}, {"from": 2, "to": 1}, {"from": -1, "to": 1}):
        answer = client.get("/v1/log/proof/consistency", params=params, headers=ADMIN)
        assert answer.status_code == 422, (params, answer.text)
    beyond = {"audit_id": entries[0]["audit_id"], "tree_size": size + 1}
    assert client.get("/v1/log/proof/inclusion", params=beyond, headers=ADMIN).status_code == 422
    before = {"audit_id": entries[-1]["audit_id"], "tree_size": 1}
    assert client.get("/v1/log/proof/inclusion", params=before, headers=ADMIN).status_code == 422
