"""PKCE (RFC 7636) with S256: a random verifier and the challenge derived from it."""

import base64
import hashlib
import hmac
import secrets

VERIFIER_BYTES = 32
"""Random bytes of a verifier: 43 characters of base64url, the shortest RFC 7636 allows."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_verifier() -> str:
    """A fresh code verifier: 256 random bits in unpadded base64url."""
    return _b64url(secrets.token_bytes(VERIFIER_BYTES))


def challenge_of(verifier: str) -> str:
    """The S256 code challenge: unpadded base64url of the verifier's SHA-256."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def verifies(verifier: str, challenge: str) -> bool:
    """Whether ``verifier`` is the one ``challenge`` was made from (constant-time compare)."""
    if not verifier.isascii():
        return False
    return hmac.compare_digest(challenge_of(verifier).encode(), challenge.encode("utf-8"))


__all__ = ["challenge_of", "new_verifier", "verifies"]
