"""Ed25519 signatures over record digests, and the key ring that verifies them."""

import base64
import binascii
import hashlib
from collections.abc import Iterable, Mapping

import attrs
import nacl.bindings
import nacl.exceptions
import nacl.signing

from ecp_core.constraints import checked

SEED_BYTES = nacl.bindings.crypto_sign_SEEDBYTES


def derive_key_id(public_key: bytes) -> str:
    """A stable key id for a public key: ``ed25519:`` + 16 hex digits of its SHA-256."""
    return "ed25519:" + hashlib.sha256(public_key).hexdigest()[:16]


class Ed25519Signer:
    """Signs the ASCII bytes of record digests with one Ed25519 key (the Signer port)."""

    def __init__(self, seed: bytes, key_id: str | None = None) -> None:
        """Use the 32-byte ``seed``; ``key_id`` defaults to one derived from the public key."""
        self._key = nacl.signing.SigningKey(seed)
        self.public_key = bytes(self._key.verify_key)
        self.key_id = key_id or derive_key_id(self.public_key)

    @classmethod
    def from_base64_seed(cls, text: str, key_id: str | None = None) -> "Ed25519Signer":
        """Read a base64 seed (the form of the server's ``ECP_AUDIT_SIGNING_KEY``); ValueError when malformed."""
        try:
            seed = base64.b64decode(text, validate=True)
        except binascii.Error as exc:
            msg = "signing key must be base64"
            raise ValueError(msg) from exc
        if len(seed) != SEED_BYTES:
            msg = "signing key must be a 32-byte Ed25519 seed"
            raise ValueError(msg)
        return cls(seed, key_id)

    @classmethod
    def generate(cls, key_id: str | None = None) -> "Ed25519Signer":
        """A fresh random key (tests, demos, first start)."""
        return cls(bytes(nacl.signing.SigningKey.generate()), key_id)

    def sign_text(self, text: str) -> str:
        """Sign ``text`` (ASCII) and return the base64 signature."""
        signed = self._key.sign(text.encode("ascii"))
        return base64.b64encode(signed.signature).decode("ascii")

    def published(self) -> "PublicSigningKey":
        """The public half, as published at ``GET /v1/audit/signing-keys``."""
        return PublicSigningKey(
            key_id=self.key_id, public_key=base64.b64encode(self.public_key).decode("ascii")
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class PublicSigningKey:
    """A published verification key."""

    key_id: str
    """The key's id, as audit records and attestations name it."""
    public_key: str
    """The public key (base64), to verify signatures with."""
    algorithm: str = "ed25519"
    """The signature algorithm."""


class KeyRing:
    """Public keys by key id; verifies signatures over record digests."""

    def __init__(self, keys: Mapping[str, bytes] | None = None) -> None:
        """Start from ``{key_id: raw 32-byte public key}``."""
        self._keys = {key_id: nacl.signing.VerifyKey(raw) for key_id, raw in (keys or {}).items()}

    @classmethod
    def of(cls, keys: Iterable[PublicSigningKey | Ed25519Signer]) -> "KeyRing":
        """A ring holding the public halves of ``keys``."""
        ring = cls()
        for key in keys:
            raw = (
                key.public_key
                if isinstance(key, Ed25519Signer)
                else base64.b64decode(key.public_key)
            )
            ring.add(key.key_id, raw)
        return ring

    def add(self, key_id: str, public_key: bytes) -> None:
        """Trust ``public_key`` for ``key_id``."""
        self._keys[key_id] = nacl.signing.VerifyKey(public_key)

    def verify_text(self, key_id: str | None, text: str, signature: str) -> bool:
        """Say whether ``signature`` (base64) is ``key_id``'s signature over ``text``."""
        key = self._keys.get(key_id) if key_id is not None else None
        if key is None:
            return False
        try:
            key.verify(text.encode("ascii"), base64.b64decode(signature, validate=True))
        except (nacl.exceptions.BadSignatureError, binascii.Error, ValueError):
            return False
        return True
