"""``ecp witness`` as a real process on loopback: it cosigns a served log's checkpoints while they
stay consistent, and refuses a fork signed with the log's own key, saying so (a non-2xx answer, a
log line and a metric), as an operator must notice.
"""

import base64
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient
from tests.support.console import WAIT, bearer, console_client, deployed, waiting_run

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.notes import COSIGNATURE, NoteKey, NoteSigner, parse_note
from ecp_core.transparency.witness import add_checkpoint_body

pytestmark = pytest.mark.e2e

ADMIN = bearer("acme", "admin")
SEED = secrets.token_bytes(32)


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client(
        log_checkpoint_seconds=0.05,
        log_origin="log.test",
        audit_signing_key=base64.b64encode(SEED).decode("ascii"),
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def log_vkey(client: TestClient) -> str:
    deployed(client, ADMIN, "pay")
    return str(client.get("/v1/log/keys", headers=ADMIN).json()["keys"][0]["vkey"])


@pytest.fixture
def witness(tmp_path, log_vkey: str) -> Iterator[tuple[str, NoteKey, subprocess.Popen[str]]]:
    """``ecp witness`` for the log, its URL and its verifier key."""
    yield from _witness(tmp_path, log_vkey)


def _witness(tmp_path, log_vkey: str) -> Iterator[tuple[str, NoteKey, subprocess.Popen[str]]]:
    port = _free_port()
    command = [
        sys.executable, "-m", "ecp_http.cli", "witness", "--name", "witness.test/w1",
        "--log", log_vkey, "--listen-port", str(port),
        "--key-file", str(tmp_path / "key"), "--state", str(tmp_path / "state.json"),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ
    )
    assert process.stdout is not None
    lines = [process.stdout.readline(), process.stdout.readline()]
    found = re.search(r"its verifier key: (\S+)", "".join(lines))
    assert found is not None, lines
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/metrics", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    try:
        yield url, NoteKey.from_vkey(found.group(1)), process
    finally:
        process.terminate()
        process.communicate(timeout=10)  # and closes its pipes


def settled_checkpoint(client: TestClient, runs: int) -> str:
    """Finish ``runs`` runs and return the checkpoint once it covers their records."""
    for _ in range(runs):
        run_id, approval_id = waiting_run(client, ADMIN, "pay")
        path = f"/deployments/pay/approvals/{approval_id}/resolve"
        client.post(path, json={"decision": "approve"}, headers={**ADMIN, **WAIT})
        client.get(f"/runs/{run_id}/audit/bundle", headers=ADMIN)  # integrates what is pending
    return client.get("/v1/log/checkpoint", headers=ADMIN).text


@pytest.mark.spec("C16 witness")
def test_the_witness_cosigns_a_growing_log_and_refuses_a_fork(client, witness):
    url, witness_key, process = witness
    first = settled_checkpoint(client, 2)
    old = Checkpoint.parse(parse_note(first).text)
    answer = httpx.post(url + "/add-checkpoint", content=add_checkpoint_body(0, [], first))
    assert answer.status_code == 200, answer.text
    assert parse_note(first).with_lines(answer.text).verified_by(witness_key) is not None

    second = settled_checkpoint(client, 2)
    new = Checkpoint.parse(parse_note(second).text)
    span = {"from": old.size, "to": new.size}
    proof = client.get("/v1/log/proof/consistency", params=span, headers=ADMIN).json()["hashes"]
    body = add_checkpoint_body(old.size, [base64.b64decode(h) for h in proof], second)
    assert httpx.post(url + "/add-checkpoint", content=body).status_code == 200

    # An insider with the log's key signs another history of the same size: a fork.
    forked_root = bytes(32)
    text = Checkpoint(new.origin, new.size, forked_root).text()
    fork = text + "\n" + NoteSigner.from_seed(new.origin, SEED).signature_line(text)
    refused = httpx.post(url + "/add-checkpoint", content=add_checkpoint_body(new.size, [], fork))
    assert refused.status_code == 422 and "forked" in refused.text
    behind = httpx.post(url + "/add-checkpoint", content=add_checkpoint_body(0, [], first))
    assert (behind.status_code, behind.text) == (409, f"{new.size}\n")
    metrics = httpx.get(url + "/metrics").text
    assert 'ecp_witness_refusals_total{status="422"} 1.0' in metrics
    assert "ecp_witness_cosignatures_total 2.0" in metrics
    process.terminate()
    _, errors = process.communicate(timeout=10)
    assert "witness refused checkpoint" in errors


@pytest.mark.spec("C16 witness")
def test_the_server_publishes_its_witnesses_cosignatures_with_each_checkpoint(tmp_path):
    log_key = NoteSigner.from_seed("log.test/acme", SEED).key.vkey()
    for url, witness_key, _ in _witness(tmp_path, log_key):
        for client in console_client(
            log_checkpoint_seconds=0.05,
            log_origin="log.test",
            audit_signing_key=base64.b64encode(SEED).decode("ascii"),
            log_witnesses=((url, witness_key.vkey()),),
        ):
            deployed(client, ADMIN, "pay")
            for runs in (1, 2):
                settled_checkpoint(client, runs)
                size = Checkpoint.parse(
                    parse_note(client.get("/v1/log/checkpoint", headers=ADMIN).text).text
                ).size
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    note = parse_note(client.get("/v1/log/checkpoint", headers=ADMIN).text)
                    if len(note.signatures) == 2 and Checkpoint.parse(note.text).size >= size:
                        break
                    time.sleep(0.05)
                assert note.verified_by(witness_key) is not None, note.render()
                assert note.verified_by(NoteKey.from_vkey(log_key)) == 0
            assert witness_key.kind == COSIGNATURE
