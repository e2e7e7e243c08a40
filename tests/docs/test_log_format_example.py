"""The transparency log's worked example in docs/audit-format.md computes as written.

Every figure is recomputed here from the example's own inputs with the project's code, and the
proofs verify; a change to the hashing, the note format or the key id shows here first.
"""

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import (
    leaf_hash,
    node_hash,
    verify_consistency,
    verify_inclusion,
)
from ecp_core.transparency.model import leaf_entry
from ecp_core.transparency.notes import NoteKey, NoteSigner, parse_note

pytestmark = pytest.mark.unit

DOC = Path(__file__).parents[2] / "docs" / "audit-format.md"


def example() -> dict:
    section = DOC.read_text().split("## Transparency log", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))


@pytest.mark.spec("C16 log-append")
def test_the_worked_example_recomputes_and_verifies():
    found = example()
    digests = ["sha256:" + hashlib.sha256(f"record {i}".encode()).hexdigest() for i in (1, 2, 3)]
    assert found["record_digests"] == digests
    leaves = [leaf_hash(leaf_entry(d)) for d in digests]
    assert found["leaf_hashes"] == [leaf.hex() for leaf in leaves]
    root = node_hash(node_hash(leaves[0], leaves[1]), leaves[2])
    assert base64.b64decode(found["root"]) == root
    signer = NoteSigner.from_seed("ecp.example.com/acme", bytes(range(32)))
    assert found["vkey"] == signer.key.vkey()
    note = parse_note(found["checkpoint"])
    assert note.verified_by(NoteKey.from_vkey(found["vkey"])) == 0
    assert Checkpoint.parse(note.text) == Checkpoint("ecp.example.com/acme", 3, root)
    proof = [base64.b64decode(h) for h in found["inclusion_of_leaf_2"]]
    assert verify_inclusion(leaves[2], 2, 3, proof, root)
    older = base64.b64decode(found["root_of_2"])
    consistency = [base64.b64decode(h) for h in found["consistency_2_to_3"]]
    assert verify_consistency(2, 3, consistency, older, root)
