"""An audit export: a deployment's window, every leaf of its log span proved, verified offline.

The export comes from a real app (memory store) through ``GET /v1/log/export``; ``ecp audit
verify-bundle`` checks it in this process with no server. Each kind of tampering with the file
(a leaf's record gone, a record rewritten, a leaf dropped, a proof hash flipped, a start
checkpoint from another history, a run left off the list) is named.
"""

import base64
import copy
import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support.console import WAIT, bearer, console_client, deployed, waiting_run

from ecp_core.permissions import ROLE_PERMISSIONS, Permission
from ecp_core.transparency.notes import NoteSigner, parse_note
from ecp_http.cli import main

pytestmark = pytest.mark.integration

ADMIN = bearer("acme", "admin")


def finish(client: TestClient, ref: str) -> str:
    run_id, approval_id = waiting_run(client, ADMIN, ref)
    path = f"/deployments/{ref}/approvals/{approval_id}/resolve"
    decided = client.post(path, json={"decision": "approve"}, headers={**ADMIN, **WAIT})
    assert decided.status_code == 200, decided.text
    assert client.get(f"/runs/{run_id}/audit/bundle", headers=ADMIN).status_code == 200
    return run_id


def instant() -> datetime:
    """Now, after the clock has visibly moved on (checkpoints are told apart by time)."""
    time.sleep(0.02)
    now = datetime.now(UTC)
    time.sleep(0.02)
    return now


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[TestClient, dict[str, Any], list[str], str]]:
    """An export of ``pay`` over a window holding two of its runs and one of ``ship``."""
    for client in console_client(log_checkpoint_seconds=0.05, log_origin="log.test"):
        deployed(client, ADMIN, "pay")
        deployed(client, ADMIN, "ship")
        before = finish(client, "pay")  # in a checkpoint signed before the window
        since = instant()
        inside = [finish(client, "pay"), finish(client, "ship"), finish(client, "pay")]
        until = instant()
        finish(client, "pay")  # after it: in the span only when no checkpoint came between
        window = {"deployment_ref": "pay", "since": since.isoformat(), "until": until.isoformat()}
        answer = client.get("/v1/log/export", params=window, headers=ADMIN)
        assert answer.status_code == 200, answer.text
        vkey = client.get("/v1/log/keys", headers=ADMIN).json()["keys"][0]["vkey"]
        yield client, answer.json(), [*inside, before], vkey


def verify(capsys, tmp_path, document: dict[str, Any], *flags: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))
    status = main(["audit", "verify-bundle", str(path), *flags], environ={})
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.spec("C16 log-export")
def test_the_export_holds_the_window_s_runs_and_verifies_offline(served, capsys, tmp_path):
    _, export, inside, vkey = served
    assert export["format"] == "ecp-audit-export/1"
    *inside, before = inside
    assert export["runs"][:2] == [inside[0], inside[2]] and before not in export["runs"]
    assert export["first_leaf"] > 0 and export["start_checkpoint"] is not None
    assert len(export["leaves"]) == export["tree_size"] - export["first_leaf"]
    carried = {leaf["record"]["run_id"] for leaf in export["leaves"]}
    assert set(inside) <= carried  # the other deployment's records account for their leaves
    status, report = verify(capsys, tmp_path, export, "--log-key", vkey)
    assert status == 0, report
    assert report["verified"] and report["complete"] and report["included"]
    assert report["consistent"] and report["chain_verified"] and report["signatures_verified"]
    assert report["log_key"] == "pinned" and report["run_count"] == len(export["runs"])
    ours = [leaf for leaf in export["leaves"] if leaf["record"]["deployment_ref"] == "pay"]
    assert report["record_count"] == len(ours) >= 3 * 2  # review, approval, done a run


def _record_gone(export: dict[str, Any]) -> None:
    export["leaves"][1]["record"] = None


def _rewritten(export: dict[str, Any]) -> None:
    export["leaves"][0]["record"]["status"] = "failed"


def _leaf_dropped(export: dict[str, Any]) -> None:
    del export["leaves"][-1]


def _proof_flipped(export: dict[str, Any]) -> None:
    raw = bytearray(base64.b64decode(export["range_proof"][0]))
    raw[0] ^= 1
    export["range_proof"][0] = base64.b64encode(bytes(raw)).decode()


def _run_left_off(export: dict[str, Any]) -> None:
    export["runs"] = export["runs"][1:]


def _forked_start(export: dict[str, Any]) -> None:
    """The start checkpoint of another history, signed with a key the export trusts."""
    signer = NoteSigner.from_seed("log.test/acme", bytes(32))
    origin, size, _ = parse_note(export["start_checkpoint"]).text.splitlines()
    text = f"{origin}\n{size}\n{base64.b64encode(bytes(32)).decode()}\n"
    export["start_checkpoint"] = text + "\n" + signer.signature_line(text)
    export["log_keys"].append({**export["log_keys"][0], "vkey": signer.key.vkey()})


TAMPERING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a record gone": (_record_gone, "has no record: the database no longer holds it"),
    "a record rewritten": (_rewritten, "record_digest does not match the record"),
    "a leaf dropped": (_leaf_dropped, "leaves; the export has"),
    "a range proof hash flipped": (_proof_flipped, "do not give the checkpoint's root"),
    "a run left off the list": (_run_left_off, "not the runs its leaves hold"),
    "a forked start checkpoint": (_forked_start, "not a prefix of the checkpoint's tree"),
}


@pytest.mark.spec("C16 log-export", "C16 verify-bundle")
@pytest.mark.parametrize("tamper", list(TAMPERING), ids=list(TAMPERING))
def test_tampering_with_an_export_is_named(served, capsys, tmp_path, tamper):
    _, export, _, _ = served
    change, error = TAMPERING[tamper]
    tampered = copy.deepcopy(export)
    change(tampered)
    status, report = verify(capsys, tmp_path, tampered)
    assert status == 1 and not report["verified"]
    assert error in report["error"], report


@pytest.mark.spec("C16 log-export")
def test_a_witness_key_the_checkpoint_lacks_fails_the_export(served, capsys, tmp_path):
    _, export, _, vkey = served
    witness = NoteSigner.from_seed("witness.test/w1", bytes(range(32)), kind=4).key.vkey()
    status, report = verify(capsys, tmp_path, export, "--log-key", vkey, "--witness-key", witness)
    assert status == 1 and "not cosigned by the witness witness.test/w1" in report["error"]


@pytest.mark.spec("C16 log-export")
def test_an_export_asks_audit_read_and_a_known_deployment_and_a_real_window(served):
    client, export, _, _ = served
    since = datetime.now(UTC)
    window = {"deployment_ref": "pay", "since": since.isoformat()}
    later = (since + timedelta(hours=1)).isoformat()
    for role, granted in ROLE_PERMISSIONS.items():
        answer = client.get(
            "/v1/log/export", params={**window, "until": later}, headers=bearer("acme", role)
        )
        assert answer.status_code == (200 if Permission.AUDIT_READ in granted else 403), role
    unknown = {**window, "until": later, "deployment_ref": "nope"}
    assert client.get("/v1/log/export", params=unknown, headers=ADMIN).status_code == 404
    elsewhere = bearer("other", "admin")
    other = client.get("/v1/log/export", params={**window, "until": later}, headers=elsewhere)
    assert other.status_code == 404  # another tenant has no such deployment
    backwards = client.get(
        "/v1/log/export", params={**window, "until": since.isoformat()}, headers=ADMIN
    )
    assert backwards.status_code == 422
    assert "until" in backwards.text
    naive = client.get(
        "/v1/log/export", params={**window, "until": "2026-01-01T00:00:00"}, headers=ADMIN
    )
    assert naive.status_code == 422
    assert export["tenant_id"] == "acme"
