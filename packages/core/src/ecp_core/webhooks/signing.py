"""Webhook signatures: ``X-Service-Signature`` and the Standard Webhooks headers (ADR 0054).

A secret is either plain text (its UTF-8 bytes are the key) or ``whsec_<base64>`` (the decoded
bytes are the key, as Standard Webhooks says). Both signatures use the same key.
"""

import base64
import binascii
import contextlib
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable

SIGNATURE_HEADER = "X-Service-Signature"
EVENT_ID_HEADER = "X-Service-Event-Id"
EVENT_TYPE_HEADER = "X-Service-Event-Type"

WEBHOOK_ID_HEADER = "webhook-id"
WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp"
WEBHOOK_SIGNATURE_HEADER = "webhook-signature"

SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of the form, not a secret
KEY_BYTES = (24, 64)
"""The shortest and longest key a ``whsec_`` secret may decode to (Standard Webhooks' range)."""
NEW_KEY_BYTES = 32
"""How many random bytes a secret the server makes carries."""

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _whsec_key(encoded: str) -> bytes:
    """The key behind ``whsec_<encoded>`` (padding may be left out); ValueError says why not."""
    bad = "a whsec_ secret is whsec_ followed by standard base64"
    if _BASE64.fullmatch(encoded) is None:
        raise ValueError(bad)
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except binascii.Error:
        raise ValueError(bad) from None
    low, high = KEY_BYTES
    if not low <= len(key) <= high:
        msg = f"a whsec_ secret decodes to {low} to {high} bytes, not {len(key)}"
        raise ValueError(msg)
    return key


def secret_problem(secret: str) -> str | None:
    """Why ``secret`` may not be given, or None; only the ``whsec_`` form has rules of its own."""
    if not secret.startswith(SECRET_PREFIX):
        return None
    try:
        _whsec_key(secret.removeprefix(SECRET_PREFIX))
    except ValueError as exc:
        return str(exc)
    return None


def signing_key(secret: str) -> bytes:
    """The HMAC key of a secret: the decoded bytes of ``whsec_<base64>``, else the UTF-8 text.

    A ``whsec_`` text that does not decode (refused since ADR 0054, so only an older stored
    secret can be one) is keyed by its text, as it always was: signing never fails.
    """
    if secret.startswith(SECRET_PREFIX):
        with contextlib.suppress(ValueError):
            return _whsec_key(secret.removeprefix(SECRET_PREFIX))
    return secret.encode("utf-8")


def new_secret() -> str:
    """A fresh secret in the ``whsec_`` form: 32 random bytes, standard base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(NEW_KEY_BYTES)).decode("ascii")


def sign_body(secret: str, body: bytes) -> str:
    """The ``X-Service-Signature`` value for ``body``: lowercase hex HMAC-SHA256."""
    return hmac.new(signing_key(secret), body, hashlib.sha256).hexdigest()


def signature_matches(secret: str, body: bytes, signature: str) -> bool:
    """Constant-time check of a received ``X-Service-Signature`` (what a receiver does)."""
    return hmac.compare_digest(sign_body(secret, body), signature.strip().lower())


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """One ``webhook-signature`` entry: ``v1,`` and the base64 HMAC of ``id.timestamp.body``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def standard_headers(
    signing_secrets: Iterable[str], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The Standard Webhooks headers, one signature per secret, space separated."""
    signatures = " ".join(
        standard_signature(secret, message_id, timestamp, body) for secret in signing_secrets
    )
    return {
        WEBHOOK_ID_HEADER: message_id,
        WEBHOOK_TIMESTAMP_HEADER: str(timestamp),
        WEBHOOK_SIGNATURE_HEADER: signatures,
    }
