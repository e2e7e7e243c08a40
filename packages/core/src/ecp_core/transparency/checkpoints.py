"""Checkpoints (C2SP ``tlog-checkpoint``): a log's origin, tree size and root, as a note's text."""

import base64
import binascii
import re

import attrs

from ecp_core.transparency.merkle import HASH_SIZE
from ecp_core.transparency.notes import NoteError

_LINES = 3  # origin, size, root
_SIZE = re.compile(r"^(0|[1-9][0-9]{0,19})$")


@attrs.frozen
class Checkpoint:
    """The head of one log: its origin line, how many leaves it has, and their root."""

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        """The note text: origin, size and base64 root, one per line."""
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse(cls, text: str) -> "Checkpoint":
        """Read a checkpoint's note text (extension lines are ignored); NoteError otherwise."""
        lines = text.split("\n")
        if len(lines) <= _LINES or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint is origin, size and root on non-empty lines")
        origin, size, root = lines[0], lines[1], lines[2]
        if not _SIZE.match(size):
            raise NoteError("a checkpoint's size is a decimal number with no leading zero")
        try:
            digest = base64.b64decode(root, validate=True)
        except binascii.Error as exc:
            raise NoteError("a checkpoint's root is base64") from exc
        if len(digest) != HASH_SIZE:
            raise NoteError("a checkpoint's root is a 32-byte SHA-256 hash")
        return cls(origin=origin, size=int(size), root=digest)


__all__ = ["Checkpoint"]
