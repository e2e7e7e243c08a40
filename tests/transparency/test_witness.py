"""The cosigning witness: it cosigns a log's checkpoints while they stay consistent, and refuses a
fork, a rollback, a forged signature and an unknown log as C2SP tlog-witness says."""

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import EMPTY_ROOT, consistency_proof, leaf_hash, tree_root
from ecp_core.transparency.notes import COSIGNATURE, NoteSigner, parse_note
from ecp_core.transparency.tiles import TiledHashes, extend_tiles, tiles_in_memory
from ecp_core.transparency.witness import (
    SIZE_MEDIA,
    Witness,
    WitnessState,
    add_checkpoint_body,
)

pytestmark = pytest.mark.unit

ORIGIN = "ecp.example.com/acme"
LOG = NoteSigner.from_seed(ORIGIN, bytes(32))
WITNESS = NoteSigner.from_seed("witness.example/w1", bytes(range(32)), kind=COSIGNATURE)


class Remembered(WitnessState):
    """The witness's state in a dict."""

    def __init__(self) -> None:
        self.heads: dict[str, tuple[int, bytes]] = {}

    def last(self, origin: str) -> tuple[int, bytes] | None:
        return self.heads.get(origin)

    def record(self, origin: str, size: int, root: bytes) -> None:
        self.heads[origin] = (size, root)


class Log:
    """A log of ``count`` leaves salted by ``salt`` (another salt is another history)."""

    def __init__(self, count: int, salt: str = "") -> None:
        leaves = [leaf_hash(hashlib.sha256(f"{salt}{i}".encode()).digest()) for i in range(count)]
        self.perfect = TiledHashes(tiles_in_memory(extend_tiles(0, leaves, tiles_in_memory({}))))

    def note(self, size: int, signer: NoteSigner = LOG) -> str:
        text = Checkpoint(ORIGIN, size, tree_root(size, self.perfect)).text()
        return text + "\n" + signer.signature_line(text)

    def submit(self, witness: Witness, old: int, size: int, **options: object) -> tuple[int, str]:
        proof = consistency_proof(old, size, self.perfect) if old else []
        answer = witness.add_checkpoint(add_checkpoint_body(old, proof, self.note(size, **options)))
        return answer.status, answer.body


def witness(state: WitnessState | None = None) -> Witness:
    return Witness(WITNESS, {ORIGIN: LOG.key}, state or Remembered(), clock=lambda: 1_765_000_000)


@pytest.mark.spec("C16 witness")
def test_a_consistent_checkpoint_is_cosigned_and_the_cosignature_verifies():
    log, seen = Log(20), witness()
    status, line = log.submit(seen, 0, 5)
    assert status == 200
    cosigned = parse_note(log.note(5)).with_lines(line)
    assert cosigned.verified_by(WITNESS.key) == 1_765_000_000
    assert log.submit(seen, 5, 12)[0] == 200
    assert log.submit(seen, 12, 12)[0] == 200  # the same checkpoint again


@pytest.mark.spec("C16 witness")
def test_a_fork_a_rollback_a_forgery_and_an_unknown_log_are_refused():
    log, seen = Log(20), witness()
    assert log.submit(seen, 0, 8)[0] == 200
    forked = Log(20, salt="other history ")
    assert forked.submit(seen, 8, 8)[0] == 422  # same size, another root
    status, body = forked.submit(seen, 8, 12)
    assert status == 422 and "forked" in body
    assert log.submit(seen, 0, 12) == (409, "8\n")  # it knows 8
    assert seen.add_checkpoint(add_checkpoint_body(3, [], log.note(12))).media_type == SIZE_MEDIA
    assert seen.add_checkpoint(add_checkpoint_body(8, [], log.note(4))).status == 400  # old > new
    stranger = NoteSigner.from_seed(ORIGIN, bytes([7]) * 32)
    assert log.submit(seen, 8, 12, signer=stranger)[0] == 403
    elsewhere = NoteSigner.from_seed("elsewhere.example/log", bytes(32))
    text = Checkpoint("elsewhere.example/log", 0, EMPTY_ROOT).text()
    unknown = add_checkpoint_body(0, [], text + "\n" + elsewhere.signature_line(text))
    assert seen.add_checkpoint(unknown).status == 404
    assert seen.add_checkpoint("nonsense").status == 400
    assert log.submit(seen, 8, 12)[0] == 200  # still the good log's witness


@pytest.mark.spec("C16 witness")
@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=6),
    bit=st.integers(min_value=0, max_value=255),
)
def test_every_consistent_step_is_cosigned_and_a_flipped_proof_bit_is_not(sizes, bit):
    log, seen = Log(300), witness()
    old = 0
    for size in sorted(set(sizes)):
        if old and size > old:
            proof = consistency_proof(old, size, log.perfect)
            spoiled = [bytearray(h) for h in proof]
            spoiled[bit % len(spoiled)][bit % 32] ^= 1 << (bit % 8)
            body = add_checkpoint_body(old, [bytes(h) for h in spoiled], log.note(size))
            assert seen.add_checkpoint(body).status == 422
        assert log.submit(seen, old, size)[0] == 200
        old = size
