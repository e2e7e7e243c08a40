"""The one reader of JSON text from outside: I-JSON (RFC 7493) and a nesting bound, or an error.

Accepted values have no duplicate member names, no unpaired surrogates, no U+0000, only integers
within ±(2**53 - 1), only finite numbers, and nest at most :data:`MAX_DEPTH` deep. The depth is
measured on the text before the recursive decoder sees it, so no input can exhaust the stack of
the decoder, the canonicaliser or a renderer later on. Whatever is accepted can be stored, read
back, canonicalised and verified.

Text that is not JSON at all raises MalformedRequest (400); JSON outside these rules raises
InvalidJsonValue (422) naming the first failing location.
"""

import json
import math
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from ecp_core.canonical import MAX_SAFE_INTEGER, storable_text
from ecp_core.errors import FieldError, InvalidJsonValue, MalformedRequest

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted (the outermost value is depth 1)."""

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# Only escapes can put U+0000 or a surrogate into a decoded string (raw ones are not UTF-8 or
# not JSON), so texts without such an escape need no walk over their strings.
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")

Loc = tuple[str | int, ...]


class _Refused(Exception):
    """A rule failed inside a decoder hook; the slow path finds where."""


def _checked_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Refused
    return found


_SAFE_DIGITS = len(str(MAX_SAFE_INTEGER))


def _checked_int(text: str) -> int:
    if len(text) > _SAFE_DIGITS + 1:  # before int(), which refuses very long texts itself
        raise _Refused
    number = int(text)
    if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        raise _Refused
    return number


def _checked_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused
    return number


def _refuse_constant(_: str) -> None:
    raise _Refused


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets in strings ignored).

    With escaped backslashes and then escaped quotes removed, every quote left delimits a string,
    so the even pieces between quotes are the text outside strings. Where ``text`` is not JSON,
    the count is exact up to the first fault, which is as far as a decoder reads.
    """
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    outside = "".join(unescaped.split('"')[::2])
    brackets = _NOT_BRACKET.sub("", outside)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def parse_json_text(raw: bytes | str) -> Any:  # noqa: ANN401 - JSON is dynamically typed
    """Decode JSON text under the rules above; raise MalformedRequest or InvalidJsonValue."""
    text = _decoded(raw)
    # No more openers than the bound means no deeper nesting either: most bodies stop here.
    if text.count("[") + text.count("{") > MAX_DEPTH and (depth := nesting_depth(text)) > MAX_DEPTH:
        raise InvalidJsonValue(
            "the JSON is nested too deeply",
            errors=[FieldError(loc=(), msg=f"nesting depth {depth} exceeds {MAX_DEPTH}")],
        )
    try:
        value = json.loads(
            text,
            object_pairs_hook=_checked_object,
            parse_int=_checked_int,
            parse_float=_checked_float,
            parse_constant=_refuse_constant,
        )
    except _Refused:
        value = None
    except ValueError as exc:  # JSONDecodeError, and int() beyond its digit limit
        raise MalformedRequest(f"the body is not JSON: {exc}") from exc
    else:
        if _RISKY_ESCAPE.search(text) is None or not any(_problems(value, ())):
            return value
    raise _first_problem(text)


def _decoded(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedRequest(f"the body is not UTF-8 text: {exc}") from exc


class _Pairs(list[tuple[str, Any]]):
    """An object as its members in order, duplicates kept (the slow path's view)."""


class _Number(str):
    """A number as its text (the slow path's view)."""

    __slots__ = ()


def _first_problem(text: str) -> InvalidJsonValue:
    """Decode again keeping every member and number as written, and name the first failure."""
    value = json.loads(
        text,
        object_pairs_hook=_Pairs,
        parse_int=_Number,
        parse_float=_Number,
        parse_constant=_Number,
    )
    loc, msg = next(_problems(value, ()), ((), "not accepted"))
    return InvalidJsonValue(
        "the JSON is not accepted (I-JSON, RFC 7493)", errors=[FieldError(loc=loc, msg=msg)]
    )


def _problems(value: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:  # noqa: ANN401
    """Every rule failure in a decoded value, in document order (depth is bounded already)."""
    if isinstance(value, str):
        if isinstance(value, _Number):
            yield from _number_problems(value, loc)
        elif not storable_text(value):
            yield loc, "must not contain U+0000 or unpaired surrogates"
    elif isinstance(value, _Pairs | dict):
        seen: set[str] = set()
        for key, item in value if isinstance(value, _Pairs) else value.items():
            if not storable_text(key):
                yield (*loc, key), "member names must not contain U+0000 or unpaired surrogates"
            elif key in seen:
                yield (*loc, key), "duplicate member name"
            seen.add(key)
            yield from _problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _problems(item, (*loc, index))


def _number_problems(text: str, loc: Loc) -> Iterator[tuple[Loc, str]]:
    if text in ("NaN", "Infinity", "-Infinity"):
        yield loc, "numbers must be finite"
    elif re.fullmatch(r"-?\d+", text):
        if len(text.lstrip("-")) > _SAFE_DIGITS or not (
            -MAX_SAFE_INTEGER <= int(text) <= MAX_SAFE_INTEGER
        ):
            yield loc, f"integers must lie within ±{MAX_SAFE_INTEGER}"
    elif not math.isfinite(float(text)):
        yield loc, "numbers must be finite (this one overflows a double)"
