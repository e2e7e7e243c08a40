"""The transparency log checked by code the project did not write: Go's reference implementation.

``interop/verify.go`` opens the served checkpoints with ``golang.org/x/mod/sumdb/note``, checks
the served inclusion and consistency proofs with ``golang.org/x/mod/sumdb/tlog``
(``CheckRecord``, ``CheckTree``) and reads the tree from the served tiles alone
(``TileHashReader``), recomputing every proof and tile from them. Go and the module come from
Debian (``golang-go``, ``golang-golang-x-mod-dev``, installed by ``make golang``); the program is
built once per session, offline, from ``/usr/share/gocode``.
"""

import base64
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from starlette.testclient import TestClient
from tests.support.console import bearer, console_client, deployed
from tests.transparency.test_log_http import checkpoint, finished_run

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.notes import COSIGNATURE, NoteSigner, parse_note
from ecp_core.transparency.tiles import TILE_HEIGHT, TILE_WIDTH, TileName

pytestmark = [pytest.mark.integration, pytest.mark.spec("C16 log-interop")]

ADMIN = bearer("acme", "admin")
SEED = secrets.token_bytes(32)
VERIFY_GO = Path(__file__).parent / "interop" / "verify.go"
GOPATH = Path("/usr/share/gocode")
RUNS = 90
"""Enough runs (three records each) for a full tile, a partial one and a tile at level 1."""
CHECKPOINTS_AFTER = (1, 2, RUNS)


@pytest.fixture(scope="session")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go program, built once per session into the basetemp with nothing fetched."""
    go = shutil.which("go")
    if go is None or not (GOPATH / "src/golang.org/x/mod/sumdb/tlog").is_dir():
        pytest.fail("Debian's golang-go and golang-golang-x-mod-dev are needed: run `make golang`")
    out = tmp_path_factory.mktemp("go-interop")
    env = {
        **os.environ,
        "GOPATH": str(GOPATH),
        "GO111MODULE": "off",
        "GOPROXY": "off",
        "GOFLAGS": "",
        "GOCACHE": str(out / "cache"),
    }
    binary = out / "verify"
    subprocess.run(
        [go, "build", "-o", str(binary), str(VERIFY_GO)],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return binary


def go_verify(binary: Path, document: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary)],
        input=json.dumps(document),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def tile_names(size: int) -> Iterator[TileName]:
    """Every tile of the tree of ``size`` leaves, at the widths that tree gives them."""
    level = 0
    while hashes_at_level := size >> (TILE_HEIGHT * level):
        full, rest = divmod(hashes_at_level, TILE_WIDTH)
        yield from (TileName(level=level, index=index) for index in range(full))
        if rest:
            yield TileName(level=level, index=full, width=rest)
        level += 1


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    """What the log served over several runs: keys, two checkpoints, proofs and tiles."""
    document: dict[str, Any] = {}
    for client in console_client(
        log_checkpoint_seconds=0.05,
        log_origin="log.test",
        audit_signing_key=base64.b64encode(SEED).decode("ascii"),
    ):
        document = serve(client)
    return document


def serve(client: TestClient) -> dict[str, Any]:
    """Run the runs, keep a checkpoint after each of CHECKPOINTS_AFTER, gather what verify.go reads."""
    deployed(client, ADMIN, "pay")
    entries: list[dict] = []
    notes: list[str] = []
    for run in range(1, RUNS + 1):
        entries += finished_run(client)[1]
        if run in CHECKPOINTS_AFTER:
            size = checkpoint(client, len(entries)).size
            assert size == len(entries)
            notes.append(client.get("/v1/log/checkpoint", headers=ADMIN).text)
    sizes = [Checkpoint.parse(parse_note(note).text).size for note in notes]
    assert sizes == sorted(set(sizes))
    newest = sizes[-1]
    inclusion = []
    for entry in entries:
        for size in sizes:
            query = {"audit_id": entry["audit_id"], "tree_size": size}
            answer = client.get("/v1/log/proof/inclusion", params=query, headers=ADMIN)
            if answer.status_code == 200:  # else the record came after that tree (422)
                inclusion.append({"record_digest": entry["record_digest"], **answer.json()})
            else:
                assert answer.status_code == 422, answer.text
    consistency = [
        {"from": first, "to": second, **proved}
        for first in sizes
        for second in sizes
        if first < second
        for proved in [
            client.get(
                "/v1/log/proof/consistency",
                params={"from": first, "to": second},
                headers=ADMIN,
            ).json()
        ]
    ]
    tiles = {}
    for name in tile_names(newest):
        answer = client.get(f"/v1/log/{name.path()}", headers=ADMIN)
        assert answer.status_code == 200, name.path()
        tiles[name.path()] = base64.b64encode(answer.content).decode("ascii")
    vkey = client.get("/v1/log/keys", headers=ADMIN).json()["keys"][0]["vkey"]
    assert vkey == NoteSigner.from_seed("log.test/acme", SEED).key.vkey()
    return {
        "vkey": vkey,
        "notes": notes,
        "inclusion": inclusion,
        "consistency": consistency,
        "tiles": tiles,
    }


def flipped(encoded: str, byte: int = 0) -> str:
    """``encoded`` (base64) with one bit of byte ``byte`` flipped."""
    raw = bytearray(base64.b64decode(encoded))
    raw[byte] ^= 0x01
    return base64.b64encode(bytes(raw)).decode("ascii")


def test_go_verifies_the_served_checkpoints_proofs_and_tiles(verifier, served):
    assert len(served["inclusion"]) > len(served["notes"])
    assert served["consistency"]
    result = go_verify(verifier, served)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok: 3 notes, 279 inclusion proofs, 3 consistency proofs, 3 tiles\n"


def test_go_ignores_a_witness_s_cosignature_it_does_not_know(verifier, served):
    witness = NoteSigner.from_seed("witness.test", secrets.token_bytes(32), COSIGNATURE)
    notes = []
    for note in served["notes"]:
        text = parse_note(note).text
        notes.append(note + witness.signature_line(text, timestamp=1_700_000_000))
    result = go_verify(verifier, {**served, "notes": notes})
    assert result.returncode == 0, result.stderr


def test_go_refuses_a_flipped_bit_in_an_inclusion_proof(verifier, served):
    inclusion = [dict(proof) for proof in served["inclusion"]]
    inclusion[0]["hashes"] = [flipped(inclusion[0]["hashes"][0]), *inclusion[0]["hashes"][1:]]
    result = go_verify(verifier, {**served, "inclusion": inclusion, "tiles": {}})
    assert result.returncode == 1
    assert "FAIL inclusion 0" in result.stderr
    assert "tlog.CheckRecord: invalid transparency proof" in result.stderr


def test_go_refuses_a_flipped_bit_in_a_consistency_proof(verifier, served):
    consistency = [dict(proof) for proof in served["consistency"]]
    hashes = consistency[-1]["hashes"]
    consistency[-1]["hashes"] = [*hashes[:-1], flipped(hashes[-1], byte=31)]
    result = go_verify(verifier, {**served, "consistency": consistency})
    assert result.returncode == 1
    assert "tlog.CheckTree: invalid transparency proof" in result.stderr


def test_go_refuses_a_flipped_bit_in_a_served_tile(verifier, served):
    # Debian's x/mod (0.7.0) TileHashReader does not authenticate the full tile 0/000 here (its
    # parent 1/000.p/1 is also a tree-hash tile); verify.go's own cross-checks refuse it.
    assert sorted(served["tiles"]) == ["tile/0/000", "tile/0/001.p/14", "tile/1/000.p/1"]
    for path, tile in served["tiles"].items():
        tiles = {**served["tiles"], path: flipped(tile, byte=5)}
        result = go_verify(verifier, {**served, "tiles": tiles})
        assert result.returncode == 1, path
        assert "tiles" in result.stderr, result.stderr


def test_go_refuses_a_flipped_bit_in_the_root(verifier, served):
    newest = parse_note(served["notes"][-1])
    head = Checkpoint.parse(newest.text)
    lines = newest.text.splitlines(keepends=True)
    lines[2] = flipped(base64.b64encode(head.root).decode("ascii"), byte=31) + "\n"
    text = "".join(lines)
    unsigned = text + "\n" + "".join(signature.line() for signature in newest.signatures)
    as_served = {**served, "notes": [*served["notes"][:-1], unsigned]}
    result = go_verify(verifier, as_served)
    assert result.returncode == 1
    assert "FAIL note 2: signature" in result.stderr
    # Signed again by the log's own key, the changed root is refused by every proof to it.
    resigned = text + "\n" + NoteSigner.from_seed(head.origin, SEED).signature_line(text)
    as_signed = {**served, "notes": [*served["notes"][:-1], resigned]}
    result = go_verify(verifier, as_signed)
    assert result.returncode == 1
    assert "FAIL note" not in result.stderr
    assert f"of {head.size}): tlog.CheckRecord: invalid transparency proof" in result.stderr
    assert "tlog.CheckTree: invalid transparency proof" in result.stderr
    assert "FAIL tiles:" in result.stderr


def test_go_refuses_a_flipped_bit_in_the_note_s_signature(verifier, served):
    note = parse_note(served["notes"][0])
    signature = note.signatures[0]
    raw = bytearray(signature.signature)
    raw[10] ^= 0x80
    bad = attrs.evolve(note, signatures=(attrs.evolve(signature, signature=bytes(raw)),))
    result = go_verify(verifier, {**served, "notes": [bad.render()]})
    assert result.returncode == 1
    assert "FAIL note 0: signature" in result.stderr
