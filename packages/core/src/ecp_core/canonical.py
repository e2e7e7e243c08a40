r"""RFC 8785 (JCS) canonical JSON, with a proven fast path.

``json.dumps`` with sorted keys, no spaces and ``ensure_ascii=False`` writes exactly the bytes
RFC 8785 prescribes for most JSON: Python escapes the same control characters in the same
lowercase ``\u00xx`` form, writes other characters as UTF-8, sorts keys within the Basic
Multilingual Plane in the UTF-16 code-unit order JCS uses, and writes integers up to 2**53 and
non-integral floats with 1e-4 <= |x| < 1e16 with the same digits. Values holding anything else
(other floats, larger integers, keys beyond U+FFFF, lone surrogates) go to the ``rfc8785``
package. A Hypothesis property checks that both paths agree.

A first, cheaper tier (ADR 0061) runs when ``orjson`` is installed: one loop per container checks
that a value holds only exact dict, list, tuple, str, int, bool and None, floats in the range
above and keys within the Basic Multilingual Plane; orjson, with sorted keys and 53-bit integers,
then writes the same bytes as JCS (a property pins it) several times faster than the walk and
encoder above. U+0000 (seen in the output) and lone surrogates or larger integers (orjson
refuses them) go on to the walk. Without orjson the walk above is the first path, as before.
"""

import hashlib
import importlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

import rfc8785

from ecp_core.errors import FieldError, NotCanonicalizable

MAX_SAFE_INTEGER = 2**53 - 1

JsonValue = Any
"""A value made of dict, list, str, int, float, bool and None (kept as ``Any`` for callers)."""


def _refuse(value: object) -> object:
    msg = f"{type(value).__name__} is not JSON"
    raise TypeError(msg)


def _make_dumps() -> Callable[[JsonValue], str]:
    """json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False), built once.

    ``json.dumps`` builds a new C encoder on every call; building it once saves that per value.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the documented encoder
        return json.JSONEncoder(
            ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
        ).encode
    encode = make(None, _refuse, json.encoder.encode_basestring, None, ":", ",", True, False, False)  # noqa: FBT003 - positional C API

    def dumps(value: JsonValue) -> str:
        if type(value) is str:
            return json.encoder.encode_basestring(value)
        return "".join(encode(value, 0))

    return dumps


_dumps = _make_dumps()


def _import_orjson() -> ModuleType | None:
    try:
        return importlib.import_module("orjson")
    except ImportError:
        return None


ORJSON = _import_orjson()
"""The ``orjson`` module when installed (an optional speed-up, never required), else None."""


def _load_orjson() -> Callable[[JsonValue], bytes] | None:
    """orjson.dumps with sorted keys and 53-bit integers, or None when orjson is not installed."""
    orjson = ORJSON
    if orjson is None:
        return None
    option = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER | orjson.OPT_PASSTHROUGH_SUBCLASS

    def dumps(value: JsonValue) -> bytes:
        return orjson.dumps(value, option=option)  # type: ignore[no-any-return]

    return dumps


_orjson_dumps = _load_orjson()
FAST_ENCODER = "orjson" if _orjson_dumps is not None else "json"
"""Which encoder writes the first tier's bytes (the benchmark prints it)."""

_SCALARS = frozenset({str, int, bool, type(None)})
_NUL_ESCAPE = b"\\u0000"


def _float_as_jcs(value: float) -> bool:
    """Non-integral with 1e-4 <= |x| < 1e16: repr, orjson and JCS write the same digits.

    All three write the shortest round-trip digits in fixed notation there. Elsewhere Python
    switches to exponents earlier than ECMAScript, and integral floats differ ("1.0" against "1").
    """
    return 1e-4 <= abs(value) < 1e16 and not value.is_integer()  # noqa: PLR2004


def _plain_keys(value: dict[Any, Any]) -> bool:
    """Str keys (joining them refuses any other) with no character beyond U+FFFF.

    Beyond it code-point order, which both encoders sort by, and UTF-16 order differ.
    """
    if not value:
        return True
    try:
        keys = "".join(value)
    except TypeError:
        return False
    return keys.isascii() or max(keys) < "\U00010000"


def _shaped_members(members: Iterable[JsonValue]) -> bool:
    """:func:`_shaped` of every member; scalars are checked in place, without a call each."""
    for member in members:
        kind = type(member)
        if kind is str or kind is int or kind is bool or member is None:
            continue
        if kind is float:
            if not _float_as_jcs(member):
                return False
        elif not ((kind is dict or kind is list or kind is tuple) and _shaped(member)):
            return False
    return True


def _shaped(value: JsonValue) -> bool:
    """Whether ``value`` holds only exact JSON types and nothing JCS writes otherwise.

    Keys are plain (:func:`_plain_keys`); floats are in JCS's fixed-notation range.
    """
    kind = type(value)
    if kind is dict:
        return _plain_keys(value) and _shaped_members(value.values())
    if kind is list or kind is tuple:
        return _shaped_members(value)
    if kind is float:
        return _float_as_jcs(value)
    return kind in _SCALARS


def by_orjson(value: JsonValue) -> bytes | None:
    """The first tier through orjson: canonical bytes of a plainly shaped ``value``, or None.

    None also when orjson is not installed; the exact walk then decides.
    """
    if _orjson_dumps is None or not _shaped(value):
        return None
    try:
        data = _orjson_dumps(value)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate or a 54-bit integer
        return None
    return None if _NUL_ESCAPE in data else data


def _plain(value: JsonValue) -> bool:
    """Say whether ``value`` holds nothing json.dumps would write differently from JCS."""
    kind = type(value)
    if kind is str:
        return "\x00" not in value and (value.isascii() or not _has_surrogate(value))
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or "\x00" in key or not (key.isascii() or _bmp_only(key)):
                return False
            if not _plain(item):
                return False
        return True
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[no-any-return]
    if kind is float:
        return _float_as_jcs(value)
    return kind is bool or value is None


def _holds_nul(value: JsonValue) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    return False


def storable_text(text: str) -> bool:
    """Whether ``text`` has no U+0000 and no unpaired surrogate (both unstorable as UTF-8 text)."""
    return "\x00" not in text and (text.isascii() or not _has_surrogate(text))


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _bmp_only(text: str) -> bool:
    """No surrogate and no character beyond U+FFFF (where code-point and UTF-16 order differ)."""
    return not any(ch >= "\ud800" and not ("\ue000" <= ch <= "\uffff") for ch in text)


def canonical_json(value: JsonValue) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``value``.

    Raises NotCanonicalizable for NaN or infinite numbers, integers outside the IEEE-754 safe
    range, lone surrogates and non-JSON types.
    """
    data = by_orjson(value)
    if data is not None:
        return data
    if _plain(value):
        return _dumps(value).encode("utf-8")
    try:
        data = bytes(rfc8785.dumps(thaw(value)))
    except (rfc8785.CanonicalizationError, TypeError, ValueError, UnicodeError) as exc:
        raise NotCanonicalizable(
            "value is not representable as canonical JSON",
            errors=[FieldError(loc=(), msg=str(exc) or type(exc).__name__)],
        ) from exc
    if _holds_nul(value):
        raise NotCanonicalizable(
            "value holds U+0000, which no text column can store",
            errors=[FieldError(loc=(), msg="must not contain U+0000")],
        )
    return data


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
