"""A cosigning witness (C2SP ``tlog-witness``): it cosigns only consistent checkpoints.

A witness cosigns a log's checkpoint only when it is consistent with the last one it cosigned for
that log.

:meth:`Witness.add_checkpoint` takes the ``add-checkpoint`` body (``old <size>``, the consistency
proof's lines, a blank line, the signed checkpoint) and answers as the protocol says: 200 with
the cosignature line, 404 for an unknown log, 403 when no trusted key signed it, 400 for an old
size beyond the new one or a malformed body, 409 with the size it knows when ``old`` is not that
size, 422 when the proof fails or the same size comes with another root (a fork). Checking and
recording happen under one lock, so two submissions can never roll the log back.
"""

import base64
import binascii
import threading
from collections.abc import Callable, Mapping
from typing import Protocol

import attrs

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import EMPTY_ROOT, verify_consistency
from ecp_core.transparency.notes import NoteError, NoteKey, NoteSigner, parse_note

MAX_PROOF_LINES = 63
SIZE_MEDIA = "text/x.tlog.size"


class WitnessState(Protocol):
    """Where a witness keeps the last checkpoint it cosigned per origin (size and root)."""

    def last(self, origin: str) -> tuple[int, bytes] | None:
        """The size and root last cosigned for ``origin``, or None."""
        ...

    def record(self, origin: str, size: int, root: bytes) -> None:
        """Persist ``origin``'s newly cosigned size and root (before the answer is sent)."""
        ...


@attrs.frozen
class WitnessAnswer:
    """The HTTP answer: status, body and its media type."""

    status: int
    body: str
    media_type: str = "text/plain; charset=utf-8"


@attrs.frozen
class Witness:
    """Cosigns checkpoints of the logs it knows (``logs``: origin → the log's note key)."""

    signer: NoteSigner
    logs: Mapping[str, NoteKey]
    state: WitnessState
    clock: Callable[[], int]
    """The POSIX time a cosignature carries."""
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False)

    def add_checkpoint(self, body: str) -> WitnessAnswer:
        """Check a submission and cosign it, or say why not (see the module's docstring)."""
        try:
            old, proof, note_text = _parse_request(body)
            note = parse_note(note_text)
            checkpoint = Checkpoint.parse(note.text)
        except (NoteError, ValueError) as exc:
            return WitnessAnswer(400, f"malformed add-checkpoint request: {exc}\n")
        key = self.logs.get(checkpoint.origin)
        if key is None:
            return WitnessAnswer(404, f"unknown log {checkpoint.origin}\n")
        try:
            signed = note.verified_by(key) is not None
        except NoteError:
            signed = False
        if not signed:
            return WitnessAnswer(403, "the checkpoint is not signed by the log's key\n")
        if old > checkpoint.size:
            return WitnessAnswer(400, f"old size {old} is beyond the checkpoint's size\n")
        with self._lock:
            return self._cosign(old, proof, note.text, checkpoint)

    def _cosign(
        self, old: int, proof: list[bytes], text: str, checkpoint: Checkpoint
    ) -> WitnessAnswer:
        last = self.state.last(checkpoint.origin)
        known_size, known_root = last if last is not None else (0, EMPTY_ROOT)
        if old != known_size:
            return WitnessAnswer(409, f"{known_size}\n", SIZE_MEDIA)
        problem = _inconsistency(old, proof, known_root, checkpoint)
        if problem is not None:
            return WitnessAnswer(422, problem + "\n")
        self.state.record(checkpoint.origin, checkpoint.size, checkpoint.root)
        return WitnessAnswer(200, self.signer.signature_line(text, self.clock()))


def _inconsistency(
    old: int, proof: list[bytes], known_root: bytes, checkpoint: Checkpoint
) -> str | None:
    """Why the checkpoint cannot follow the one cosigned (``old`` leaves, ``known_root``)."""
    if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
        return "a checkpoint of size 0 has the empty tree's root"
    if old == 0:
        return "no proof is needed from the empty tree" if proof else None
    if old == checkpoint.size:
        same = checkpoint.root == known_root and not proof
        return None if same else "the same size with another root: the log forked"
    if not verify_consistency(old, checkpoint.size, proof, known_root, checkpoint.root):
        return f"the proof from {old} to {checkpoint.size} does not verify: the log forked"
    return None


def _parse_request(body: str) -> tuple[int, list[bytes], str]:
    """``old <n>``, the proof lines, a blank line, then the checkpoint note."""
    head, blank, note = body.partition("\n\n")
    lines = head.split("\n")
    if not blank or not lines[0].startswith("old "):
        raise ValueError("the body starts with 'old <size>', the proof lines, a blank line")
    size = lines[0].removeprefix("old ")
    if not size.isdigit() or (len(size) > 1 and size.startswith("0")):
        raise ValueError("the old size is a decimal number with no leading zero")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise ValueError(f"at most {MAX_PROOF_LINES} proof lines")
    try:
        proof = [base64.b64decode(line, validate=True) for line in lines[1:]]
    except binascii.Error as exc:
        raise ValueError("each proof line is one base64 hash") from exc
    return int(size), proof, note


def add_checkpoint_body(old: int, proof: list[bytes], note: str) -> str:
    """The body a log sends a witness: ``old``, the proof from it, a blank line, the note."""
    lines = [f"old {old}", *(base64.b64encode(h).decode("ascii") for h in proof)]
    return "\n".join(lines) + "\n\n" + note


__all__ = [
    "MAX_PROOF_LINES",
    "SIZE_MEDIA",
    "Witness",
    "WitnessAnswer",
    "WitnessState",
    "add_checkpoint_body",
]
