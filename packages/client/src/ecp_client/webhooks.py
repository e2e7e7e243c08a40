"""Verify a webhook delivery from ECP before trusting it: ``verify(headers, body, secret)``.

A delivery carries two signatures made with the subscription's secret (docs/webhooks.md): the
Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``: base64
HMAC-SHA256 of ``"<id>.<timestamp>.<body>"``, one ``v1,`` entry per signing secret) and the
service's own ``X-Service-Signature`` (hex HMAC-SHA256 of the body). A secret ``whsec_<base64>``
keys both with its decoded bytes; any other secret with its UTF-8 text.
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ecp_client.errors import ClientError

__all__ = ["DEFAULT_TOLERANCE_SECONDS", "WebhookVerificationFailed", "verify"]

DEFAULT_TOLERANCE_SECONDS = 300
"""How far ``webhook-timestamp`` may be from this clock (five minutes, as docs/webhooks.md says)."""

_PREFIX = "whsec_"


class WebhookVerificationFailed(ClientError):
    """The delivery is not signed by the secret, is too old or too new, or lacks its headers."""


def _key(secret: str) -> bytes:
    if secret.startswith(_PREFIX):
        encoded = secret.removeprefix(_PREFIX)
        try:
            return base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except binascii.Error:
            pass  # an old stored secret that is not base64 signs with its text
    return secret.encode("utf-8")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _standard(
    keys: list[bytes], headers: Mapping[str, str], body: bytes, tolerance: int, now: float
) -> None:
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature") or ""
    if message_id is None or timestamp is None:
        raise WebhookVerificationFailed("webhook-id and webhook-timestamp are required")
    if not timestamp.isdigit() or abs(now - int(timestamp)) > tolerance:
        raise WebhookVerificationFailed("webhook-timestamp is too far from this clock")
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = [
        "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
        for key in keys
    ]
    sent = signatures.split()
    if not any(hmac.compare_digest(mine, theirs) for mine in expected for theirs in sent):
        raise WebhookVerificationFailed("no webhook-signature matches the secret")


def _service(keys: list[bytes], signature: str, body: bytes) -> None:
    expected = [hmac.new(key, body, hashlib.sha256).hexdigest() for key in keys]
    if not any(hmac.compare_digest(mine, signature.strip().lower()) for mine in expected):
        raise WebhookVerificationFailed("X-Service-Signature does not match the secret")


def verify(
    headers: Mapping[str, str],
    body: bytes,
    secret: str | Sequence[str],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """The delivery's event (its JSON body) once its signatures hold; else raise.

    ``body`` is the raw request body, byte for byte. ``secret`` may be several (during a
    rotation). The Standard Webhooks signature is checked, with the age of its timestamp, when
    its headers are there; ``X-Service-Signature`` is checked when it is there; at least one must
    be. Raises :class:`WebhookVerificationFailed`.
    """
    keys = [_key(one) for one in ([secret] if isinstance(secret, str) else secret)]
    if not keys:
        raise ValueError("give at least one secret")
    standard = _header(headers, "webhook-signature")
    service = _header(headers, "x-service-signature")
    if standard is None and service is None:
        raise WebhookVerificationFailed("the delivery carries no signature")
    if standard is not None:
        _standard(keys, headers, body, tolerance_seconds, time.time() if now is None else now)
    if service is not None:
        _service(keys, service, body)
    try:
        event = json.loads(body)
    except ValueError:
        raise WebhookVerificationFailed("the body is not JSON") from None
    if not isinstance(event, dict):
        raise WebhookVerificationFailed("the body is not a JSON object")
    return event
