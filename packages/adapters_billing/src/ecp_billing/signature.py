"""Paddle Billing's webhook signature: ``Paddle-Signature: ts=<unix>;h1=<hex>``.

``h1`` is the lowercase hex HMAC-SHA256, keyed with the notification destination's secret, of
``"<ts>:<raw body>"``. A header may carry several ``h1`` (while a secret is rotated); one match
is enough. Each comparison takes constant time, and ``ts`` must lie within five minutes of now
(CONTRACT "Hosted offer").
"""

import hashlib
import hmac
from datetime import datetime, timedelta

from ecp_core.errors import FieldError, WebhookRejected

SIGNATURE_HEADER = "paddle-signature"
"""The header carrying the signature (lower case, as the server sees header names)."""

MAX_SKEW = timedelta(minutes=5)
"""How far the signature's time may lie from now, either way."""

_LOC = ("headers", "Paddle-Signature")
_MAX_DIGITS = 12
"""Digits a Unix time in seconds has for the next thirty thousand years."""


def _mac(secret: str, timestamp: str, body: bytes) -> str:
    signed = timestamp.encode("ascii") + b":" + body
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def signature_header(secret: str, body: bytes, at: datetime, *, extra: tuple[str, ...] = ()) -> str:
    """The ``Paddle-Signature`` value for ``body`` signed at ``at`` (and ``extra`` secrets)."""
    timestamp = str(int(at.timestamp()))
    macs = [_mac(key, timestamp, body) for key in (secret, *extra)]
    return ";".join([f"ts={timestamp}", *(f"h1={mac}" for mac in macs)])


def _rejected(msg: str) -> WebhookRejected:
    return WebhookRejected(
        "the merchant webhook is not signed correctly", errors=[FieldError(loc=_LOC, msg=msg)]
    )


def _parts(header: str) -> tuple[str, list[str]]:
    """The header's ``ts`` and its ``h1`` values; WebhookRejected when malformed."""
    stamps: list[str] = []
    macs: list[str] = []
    for part in header.split(";"):
        name, equals, value = part.strip().partition("=")
        if not equals:
            raise _rejected("not a list of name=value pairs")
        if name == "ts":
            stamps.append(value)
        elif name == "h1":
            macs.append(value)
    if (
        len(stamps) != 1
        or not (stamps[0].isascii() and stamps[0].isdigit())
        or len(stamps[0]) > _MAX_DIGITS
    ):
        raise _rejected("needs exactly one ts, a Unix time in seconds")
    if not macs:
        raise _rejected("needs at least one h1")
    return stamps[0], macs


def verify(secret: str, header: str | None, body: bytes, now: datetime) -> None:
    """Accept ``body`` only when ``header`` signs it with ``secret`` within :data:`MAX_SKEW`."""
    if not header:
        raise _rejected("the header is missing")
    timestamp, macs = _parts(header)
    signed_at = int(timestamp)
    if abs(now.timestamp() - signed_at) > MAX_SKEW.total_seconds():
        raise _rejected("signed more than five minutes away from now")
    expected = _mac(secret, timestamp, body).encode("ascii")
    matches = [hmac.compare_digest(expected, mac.encode("utf-8", "replace")) for mac in macs]
    if not any(matches):
        raise _rejected("no h1 matches the body")


__all__ = ["MAX_SKEW", "SIGNATURE_HEADER", "signature_header", "verify"]
