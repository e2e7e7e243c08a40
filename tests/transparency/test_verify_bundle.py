"""``ecp audit verify-bundle``: a served bundle verifies offline; each kind of tampering fails.

The bundle comes from a real app (memory store); the command runs in this process with no
server and no database. Tampering: a record rewritten, a chain's tail cut, a proof hash
flipped, a leaf index moved, the checkpoint re-signed by another key, a key not pinned.
"""

import base64
import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.console import WAIT, bearer, console_client, deployed, waiting_run

from ecp_core.transparency.notes import NoteSigner, parse_note
from ecp_http.cli import main

pytestmark = pytest.mark.integration

ADMIN = bearer("acme", "admin")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[dict[str, Any], str]]:
    """A finished run's bundle and the log's verifier key, as the API serves them."""
    for client in console_client(log_checkpoint_seconds=0.05, log_origin="log.test"):
        deployed(client, ADMIN, "pay")
        run_id, approval_id = waiting_run(client, ADMIN, "pay")
        path = f"/deployments/pay/approvals/{approval_id}/resolve"
        decided = client.post(path, json={"decision": "approve"}, headers={**ADMIN, **WAIT})
        assert decided.status_code == 200
        bundle = client.get(f"/runs/{run_id}/audit/bundle", headers=ADMIN).json()
        vkey = client.get("/v1/log/keys", headers=ADMIN).json()["keys"][0]["vkey"]
        yield bundle, vkey


def run(capsys, tmp_path, bundle: dict[str, Any], *flags: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    status = main(["audit", "verify-bundle", str(path), *flags], environ={})
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.spec("C16 verify-bundle")
def test_a_served_bundle_verifies_offline_with_the_pinned_key(served, capsys, tmp_path):
    bundle, vkey = served
    status, report = run(capsys, tmp_path, bundle, "--log-key", vkey)
    assert status == 0, report
    assert report["verified"] and report["complete"] and report["included"]
    assert report["log_key"] == "pinned"
    assert report["record_count"] == len(bundle["records"]) >= 3
    unpinned_status, unpinned = run(capsys, tmp_path, bundle)
    assert unpinned_status == 0 and unpinned["log_key"] == "from the bundle itself"


def _rewrite_record(bundle: dict[str, Any]) -> None:
    bundle["records"][0]["status"] = "failed"


def _cut_tail(bundle: dict[str, Any]) -> None:
    bundle["records"].pop()
    bundle["inclusion"].pop()


def _flip_proof(bundle: dict[str, Any]) -> None:
    raw = bytearray(base64.b64decode(bundle["inclusion"][1]["hashes"][0]))
    raw[0] ^= 1
    bundle["inclusion"][1]["hashes"][0] = base64.b64encode(bytes(raw)).decode()


def _move_leaf(bundle: dict[str, Any]) -> None:
    first, second = bundle["inclusion"][0], bundle["inclusion"][1]
    first["leaf_index"], second["leaf_index"] = second["leaf_index"], first["leaf_index"]


def _forge_checkpoint(bundle: dict[str, Any]) -> None:
    text = parse_note(bundle["checkpoint"]).text
    forger = NoteSigner.from_seed(text.split("\n")[0], bytes(range(32)))
    bundle["checkpoint"] = text + "\n" + forger.signature_line(text)


def _misstate_size(bundle: dict[str, Any]) -> None:
    bundle["tree_size"] += 1


TAMPERING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a record rewritten": (_rewrite_record, "digest"),
    "the chain's tail cut": (_cut_tail, "stop short of its end"),
    "a proof hash flipped": (_flip_proof, "not in the checkpoint's tree"),
    "a leaf reordered": (_move_leaf, "not in the checkpoint's tree"),
    "the checkpoint re-signed": (_forge_checkpoint, "not signed by a trusted log key"),
    "the tree size misstated": (_misstate_size, "its checkpoint"),
}


@pytest.mark.spec("C16 verify-bundle")
@pytest.mark.parametrize("kind", list(TAMPERING))
def test_tampering_is_caught_and_named(served, capsys, tmp_path, kind):
    bundle, vkey = served
    tampered = copy.deepcopy(bundle)
    change, said = TAMPERING[kind]
    change(tampered)
    status, report = run(capsys, tmp_path, tampered, "--log-key", vkey)
    assert status == 1
    assert not report["verified"]
    assert said in report["error"], report


@pytest.mark.spec("C16 verify-bundle")
def test_what_is_not_a_bundle_is_a_usage_error(capsys, tmp_path):
    path = tmp_path / "not.json"
    path.write_text("[1, 2]")
    assert main(["audit", "verify-bundle", str(path)], environ={}) == 2
    assert main(["audit", "verify-bundle", str(tmp_path / "missing.json")], environ={}) == 2
    path.write_text('{"format": "ecp-audit-bundle/1"}')
    assert main(["audit", "verify-bundle", str(path)], environ={}) == 1
