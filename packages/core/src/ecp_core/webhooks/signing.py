"""Webhook signatures: lowercase hex HMAC-SHA256 of the exact raw body with the subscription secret."""

import hashlib
import hmac

SIGNATURE_HEADER = "X-Service-Signature"
EVENT_ID_HEADER = "X-Service-Event-Id"
EVENT_TYPE_HEADER = "X-Service-Event-Type"


def sign_body(secret: str, body: bytes) -> str:
    """The ``X-Service-Signature`` value for ``body``."""
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def signature_matches(secret: str, body: bytes, signature: str) -> bool:
    """Constant-time check of a received signature (what a receiver does)."""
    return hmac.compare_digest(sign_body(secret, body), signature.strip().lower())
