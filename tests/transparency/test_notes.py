"""Signed notes, checkpoints and cosignatures as C2SP writes them."""

import secrets

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.notes import (
    COSIGNATURE,
    NoteError,
    NoteKey,
    NoteSigner,
    parse_note,
)

pytestmark = pytest.mark.unit

# The signed-note format's own example: a verifier key and the note it verifies.
EXAMPLE_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
EXAMPLE_NOTE = (
    "This is an example message.\n\n"
    "\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXm"
    "RKuwHjG1Yu72IneyaQM=\n"
)


def test_the_formats_example_note_verifies_with_its_vkey():
    key = NoteKey.from_vkey(EXAMPLE_VKEY)
    assert key.vkey() == EXAMPLE_VKEY
    note = parse_note(EXAMPLE_NOTE)
    assert note.text == "This is an example message.\n"
    assert note.verified_by(key) == 0
    assert note.render() == EXAMPLE_NOTE


def test_a_changed_text_fails_and_an_unknown_key_is_ignored():
    key = NoteKey.from_vkey(EXAMPLE_VKEY)
    with pytest.raises(NoteError):
        parse_note(EXAMPLE_NOTE.replace("example message", "example massage")).verified_by(key)
    stranger = NoteSigner.from_seed("example.com/other", secrets.token_bytes(32)).key
    assert parse_note(EXAMPLE_NOTE).verified_by(stranger) is None


@given(
    origin=st.from_regex(r"[a-z0-9.]{1,20}/[a-z0-9-]{1,20}", fullmatch=True),
    size=st.integers(min_value=0, max_value=2**63),
    root=st.binary(min_size=32, max_size=32),
    timestamp=st.integers(min_value=0, max_value=2**63 - 1),
)
def test_a_signed_and_cosigned_checkpoint_reads_back_and_verifies(origin, size, root, timestamp):
    log = NoteSigner.from_seed(origin, bytes(32))
    witness = NoteSigner.from_seed("witness.example/w1", bytes(range(32)), kind=COSIGNATURE)
    checkpoint = Checkpoint(origin=origin, size=size, root=root)
    text = checkpoint.text()
    note = parse_note(text + "\n" + log.signature_line(text))
    cosigned = note.with_lines(witness.signature_line(text, timestamp))
    again = parse_note(cosigned.render())
    assert Checkpoint.parse(again.text) == checkpoint
    assert again.verified_by(log.key) == 0
    assert again.verified_by(witness.key) == timestamp
    assert NoteKey.from_vkey(witness.key.vkey()) == witness.key


@pytest.mark.parametrize(
    "note",
    [
        "no blank line\n\u2014 a AAAAAAA=\n",
        "text\n\n",
        "text\n\nnot a signature\n",
        "text\n\n\u2014 a b+c!\n",
        "text\n\n\u2014 a AAAA\n",
        "text\x07\n\n\u2014 a AAAAAAA=\n",
        "text\n\n\u2014 a AAAAAAA=",
    ],
)
def test_malformed_notes_are_refused(note):
    with pytest.raises(NoteError):
        parse_note(note)


@pytest.mark.parametrize(
    "text",
    [
        "origin\n01\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        "origin\n1\nAAAA\n",
        "origin\n1\n",
        "origin\n-1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        "origin\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ],
)
def test_malformed_checkpoints_are_refused(text):
    with pytest.raises(NoteError):
        Checkpoint.parse(text)


def test_a_vkey_whose_id_does_not_match_is_refused():
    wrong = EXAMPLE_VKEY.replace("+530d903a+", "+530d903b+")
    with pytest.raises(NoteError):
        NoteKey.from_vkey(wrong)
