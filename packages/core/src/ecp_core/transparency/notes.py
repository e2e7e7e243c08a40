r"""Signed notes (C2SP ``signed-note``) with Ed25519, and witnesses' cosignatures.

Cosignatures are C2SP ``tlog-cosignature``'s timestamped Ed25519 type.

A note is text ending in a newline, a blank line, then one line per signature:
``— <key name> base64(key id || signature)``. The key id is the first four bytes of
``SHA-256(name || "\n" || type || public key)``; type ``0x01`` signs the text itself, type
``0x04`` (a cosignature) signs ``cosignature/v1\ntime <t>\n`` followed by the text and carries
the timestamp before the signature.
"""

import base64
import binascii
import hashlib
import struct
from collections.abc import Callable

import attrs
import nacl.exceptions
import nacl.signing

ED25519 = 0x01
"""Signature type of an Ed25519 note signature."""
COSIGNATURE = 0x04
"""Signature type of a timestamped Ed25519 checkpoint cosignature."""
MAX_SIGNATURES = 32
"""Signature lines a note may carry (the format asks verifiers to take at least 16)."""
_DASH = "\u2014 "
_KEY_ID = 4
_PUBLIC_KEY = 32
_SIGNATURE = 64
_TIMESTAMP = 8
_SPACE = 0x20


class NoteError(ValueError):
    """A note that is malformed or not signed by a trusted key."""


def key_id(name: str, kind: int, public_key: bytes) -> bytes:
    """The four-byte id of ``public_key`` under ``name`` for signature type ``kind``."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public_key).digest()[:4]


def _checked_name(name: str) -> str:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError("a key name is not empty and has no spaces or '+'")
    return name


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a witness signs: the header, the time line and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


@attrs.frozen
class NoteKey:
    """A public key that verifies one kind of signature line: name, type and key."""

    name: str
    public_key: bytes
    kind: int = ED25519

    @property
    def id(self) -> bytes:
        """The key id its signature lines start with."""
        return key_id(self.name, self.kind, self.public_key)

    def vkey(self) -> str:
        """The verifier key: ``<name>+<hex key id>+<base64(type || public key)>``."""
        material = base64.b64encode(bytes([self.kind]) + self.public_key).decode()
        return f"{self.name}+{self.id.hex()}+{material}"

    @classmethod
    def from_vkey(cls, text: str) -> "NoteKey":
        """Read a verifier key; NoteError when it is malformed or its id does not match."""
        name, _, rest = text.partition("+")
        hex_id, _, material = rest.partition("+")
        try:
            raw = base64.b64decode(material, validate=True)
            wanted = bytes.fromhex(hex_id)
        except (binascii.Error, ValueError) as exc:
            raise NoteError("a verifier key is <name>+<hex id>+<base64 key>") from exc
        if len(raw) != 1 + _PUBLIC_KEY or raw[0] not in (ED25519, COSIGNATURE):
            raise NoteError("a verifier key here is an Ed25519 key (type 0x01 or 0x04)")
        key = cls(name=_checked_name(name), public_key=raw[1:], kind=raw[0])
        if key.id != wanted:
            raise NoteError("the verifier key's id does not match its name and key")
        return key

    def check(self, text: str, signature: bytes) -> int | None:
        """The cosignature's timestamp (0 for a plain signature) when ``signature`` verifies."""
        verify = nacl.signing.VerifyKey(self.public_key)
        try:
            if self.kind != COSIGNATURE:
                verify.verify(text.encode(), signature)
                return 0
            if len(signature) != _TIMESTAMP + _SIGNATURE:
                return None
            (timestamp,) = struct.unpack(">Q", signature[:_TIMESTAMP])
            verify.verify(cosigned_message(text, timestamp), signature[_TIMESTAMP:])
        except nacl.exceptions.BadSignatureError:
            return None
        return int(timestamp)


@attrs.frozen
class NoteSigner:
    """Signs notes as ``name`` with an Ed25519 key, plainly or as a cosigner.

    ``sign`` returns the raw 64-byte signature of the text given (the audit signer's, or a key
    of this object's own: :meth:`from_seed`).
    """

    name: str
    public_key: bytes
    sign: Callable[[str], bytes] = attrs.field(repr=False)
    kind: int = ED25519

    @classmethod
    def from_seed(cls, name: str, seed: bytes, kind: int = ED25519) -> "NoteSigner":
        """A signer with its own key, made from a 32-byte Ed25519 seed."""
        key = nacl.signing.SigningKey(seed)
        sign: Callable[[str], bytes] = lambda text: key.sign(text.encode()).signature  # noqa: E731
        return cls(name=name, public_key=bytes(key.verify_key), sign=sign, kind=kind)

    @property
    def key(self) -> NoteKey:
        """The matching public key."""
        return NoteKey(name=_checked_name(self.name), public_key=self.public_key, kind=self.kind)

    def signature_line(self, text: str, timestamp: int = 0) -> str:
        """The signature line for ``text`` (a cosignature carries ``timestamp``)."""
        if self.kind == COSIGNATURE:
            signed = cosigned_message(text, timestamp).decode()
            raw = struct.pack(">Q", timestamp) + self.sign(signed)
        else:
            raw = self.sign(text)
        return Signature(self.name, self.key.id, raw).line()


@attrs.frozen
class Signature:
    """One signature line of a note: the key's name, its id and the signature bytes."""

    name: str
    key_id: bytes
    signature: bytes

    def line(self) -> str:
        """The line as the note carries it."""
        return f"{_DASH}{self.name} {base64.b64encode(self.key_id + self.signature).decode()}\n"


@attrs.frozen
class Note:
    """A note split into its text (ending in a newline) and its signature lines."""

    text: str
    signatures: tuple[Signature, ...]

    def render(self) -> str:
        """The note as text: the text, a blank line, the signature lines."""
        return self.text + "\n" + "".join(s.line() for s in self.signatures)

    def with_lines(self, lines: str) -> "Note":
        """This note with the signature lines ``lines`` (as :meth:`NoteSigner.signature_line`) added."""
        return attrs.evolve(
            self, signatures=self.signatures + parse_note("x\n\n" + lines).signatures
        )

    def verified_by(self, key: NoteKey) -> int | None:
        """The timestamp (0 for a plain signature) of ``key``'s valid signature, else None.

        A signature line with ``key``'s name and id that does not verify is a NoteError (the
        format asks a verifier to reject such a note).
        """
        found = None
        for signature in self.signatures:
            if signature.name == key.name and signature.key_id == key.id:
                checked = key.check(self.text, signature.signature)
                if checked is None:
                    raise NoteError(f"the signature of {key.name} does not verify")
                found = checked
        return found


def parse_note(note: str) -> Note:
    """Split a signed note; NoteError when it is not one (no signature verified here)."""
    if any(ord(c) < _SPACE and c != "\n" for c in note) or not note.endswith("\n"):
        raise NoteError("a note is UTF-8 text with no control characters, ending in a newline")
    text, separator, block = note.rpartition("\n\n")
    if not separator or not text:
        raise NoteError("a note's text and its signatures are separated by a blank line")
    lines = block.splitlines()
    if not lines or len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note carries 1 to {MAX_SIGNATURES} signatures")
    signatures = []
    for line in lines:
        if not line.startswith(_DASH):
            raise NoteError("a signature line starts with an em dash and a space")
        name, space, encoded = line[len(_DASH) :].partition(" ")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise NoteError("a signature is base64") from exc
        if not space or len(raw) <= _KEY_ID:
            raise NoteError("a signature line is '— <name> <base64 key id and signature>'")
        signatures.append(Signature(_checked_name(name), raw[:_KEY_ID], raw[_KEY_ID:]))
    return Note(text=text + "\n", signatures=tuple(signatures))


__all__ = [
    "COSIGNATURE",
    "ED25519",
    "MAX_SIGNATURES",
    "Note",
    "NoteError",
    "NoteKey",
    "NoteSigner",
    "Signature",
    "cosigned_message",
    "key_id",
    "parse_note",
]
