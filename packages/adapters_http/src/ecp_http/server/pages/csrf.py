"""CSRF tokens for the hosted pages' forms: each bound to one session and one form.

A token is the HMAC-SHA256 of the session id and the form's name under a key only the server
holds, so a page of another origin can neither read nor forge one; a token of one form or session
does not pass for another. The browser's SameSite=Lax session cookie is the first line; the token
is the second (CONTRACT "Hosted offer": a CSRF token on every form).
"""

import base64
import hashlib
import hmac


def csrf_token(key: bytes, session_id: str, form: str) -> str:
    """The token for ``form`` in session ``session_id``."""
    mac = hmac.new(key, f"{session_id}\x00{form}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def csrf_valid(key: bytes, session_id: str, form: str, token: str | None) -> bool:
    """Whether ``token`` is the one for ``form`` in session ``session_id`` (constant time)."""
    if not token:
        return False
    return hmac.compare_digest(csrf_token(key, session_id, form), token)


__all__ = ["csrf_token", "csrf_valid"]
