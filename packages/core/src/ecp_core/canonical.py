r"""RFC 8785 (JCS) canonical JSON, with a proven fast path.

For JSON made of objects, arrays, strings, booleans, null and integers within ±(2**53 - 1), whose
object keys hold no character outside the Basic Multilingual Plane, ``json.dumps`` with sorted
keys, no spaces and ``ensure_ascii=False`` writes exactly the bytes RFC 8785 prescribes: Python
escapes the same control characters with the same lowercase ``\u00xx`` form, and for such keys
code-point order equals the UTF-16 code-unit order JCS sorts by. Anything else (floats, astral
keys, lone surrogates) goes to the ``rfc8785`` package. A Hypothesis property checks that both
paths agree.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import rfc8785

from ecp_core.errors import FieldError, NotCanonicalizable

MAX_SAFE_INTEGER = 2**53 - 1

JsonValue = Any
"""A value made of dict, list, str, int, float, bool and None (kept as ``Any`` for callers)."""

_dumps = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def _plain(value: JsonValue) -> bool:
    """Say whether ``value`` needs nothing json.dumps would write differently from JCS."""
    kind = type(value)
    if kind is str:
        return not _has_surrogate(value)
    if kind is bool or value is None:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or _has_astral_or_surrogate(key) or not _plain(item):
                return False
        return True
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)
    return False


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


def _has_astral_or_surrogate(text: str) -> bool:
    return not text.isascii() and any(
        ch >= "\ud800" and not ("\ue000" <= ch <= "\uffff") for ch in text
    )


def canonical_json(value: JsonValue) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``value``.

    Raises NotCanonicalizable for NaN or infinite numbers, integers outside the IEEE-754 safe
    range, lone surrogates and non-JSON types.
    """
    if _plain(value):
        return _dumps(value).encode("utf-8")
    try:
        return bytes(rfc8785.dumps(thaw(value)))
    except (rfc8785.CanonicalizationError, TypeError, ValueError, UnicodeError) as exc:
        raise NotCanonicalizable(
            "value is not representable as canonical JSON",
            errors=[FieldError(loc=(), msg=str(exc) or type(exc).__name__)],
        ) from exc


def sha256_digest(data: bytes) -> str:
    """Return ``"sha256:" + hex`` of ``data``, the digest notation used across ECP."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def json_digest(value: JsonValue) -> str:
    """Return the ``sha256:`` digest of the canonical JSON of ``value``."""
    return sha256_digest(canonical_json(value))


def thaw(value: Any) -> JsonValue:  # noqa: ANN401 - JSON is dynamically typed
    """Copy a JSON-like value into plain dicts and lists (tuples and mappings included)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [thaw(item) for item in value]
    return value
