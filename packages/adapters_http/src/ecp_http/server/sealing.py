"""Sealed values for cookies: JSON encrypted and authenticated with PyNaCl's SecretBox.

The key is not the cookie password itself: HKDF-SHA256 (RFC 5869) derives a 256-bit key from
``ECP_IDP_COOKIE_PASSWORD`` (at least 32 random characters) for each purpose, so the login-state
cookie and the session cookie never open each other (ADR 0034). A sealed value carries its own
expiry inside the box; the cookie's ``Max-Age`` is only a hint to the browser.
"""

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import nacl.exceptions
import nacl.secret
import nacl.utils

VERSION = "v1."
"""The prefix of every sealed value (a later format can be told apart)."""

_SALT = b"ecp cookie seal v1"


class SealBroken(Exception):
    """A sealed value that does not open: tampered, truncated, another key's, or expired."""


def derive_key(password: str, purpose: str) -> bytes:
    """A 32-byte key for ``purpose``: HKDF-SHA256 of the password (one expand block)."""
    pseudo_random = hmac.new(_SALT, password.encode("utf-8"), hashlib.sha256).digest()
    return hmac.new(pseudo_random, purpose.encode("utf-8") + b"\x01", hashlib.sha256).digest()


class Sealer:
    """Seals and opens JSON objects for one purpose, each with an expiry."""

    def __init__(self, password: str, purpose: str) -> None:
        """Derive this purpose's key from ``password``."""
        self._box = nacl.secret.SecretBox(derive_key(password, purpose))

    def seal(self, data: Mapping[str, Any], *, expires_at: datetime) -> str:
        """``data`` (JSON-able) encrypted with a fresh random nonce, valid until ``expires_at``."""
        plain = json.dumps(
            {"exp": int(expires_at.timestamp()), "data": dict(data)}, separators=(",", ":")
        ).encode("utf-8")
        sealed = self._box.encrypt(plain, nacl.utils.random(nacl.secret.SecretBox.NONCE_SIZE))
        return VERSION + base64.urlsafe_b64encode(bytes(sealed)).rstrip(b"=").decode("ascii")

    def unseal(self, sealed: str, *, now: datetime) -> dict[str, Any]:
        """The data inside ``sealed``; SealBroken when it does not open or has expired."""
        if not sealed.startswith(VERSION) or not sealed.isascii():
            raise SealBroken("not a sealed value")
        text = sealed[len(VERSION) :]
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            plain = self._box.decrypt(raw)
            opened = json.loads(plain)
        except (binascii.Error, ValueError, nacl.exceptions.CryptoError) as exc:
            raise SealBroken("the sealed value does not open") from exc
        if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != text:
            raise SealBroken("the sealed value is not in canonical form")
        if not isinstance(opened, dict):
            raise SealBroken("the sealed value holds no object")
        expires, data = opened.get("exp"), opened.get("data")
        if not isinstance(expires, int) or not isinstance(data, dict):
            raise SealBroken("the sealed value has no expiry or data")
        if now.timestamp() >= expires:
            raise SealBroken("the sealed value has expired")
        return data


__all__ = ["VERSION", "SealBroken", "Sealer", "derive_key"]
