r"""Tenant regular expressions in JSON Schemas, evaluated by RE2 in time linear in the subject.

A schema's ``pattern`` and ``patternProperties`` keys come from tenants; Python's ``re``
backtracks, so ``^(a+)+$`` against a long string runs for ever. Here every such pattern is
compiled and searched by RE2 (ADR 0097): what RE2 cannot run (backreferences, lookaround) is
refused when the schema is stored, and a payload is checked by the keyword functions below,
which replace ``jsonschema``'s own for ``pattern``, ``patternProperties`` and
``additionalProperties``. ``unevaluatedProperties`` finds its evaluated keys with ``re`` inside
``jsonschema``; a schema that has it beside ``patternProperties`` is refused instead
(:func:`unevaluated_beside_patterns`).

ECMA-262 ``\uXXXX`` escapes are read as the code point they name (RE2 writes ``\x{XXXX}``).
``re2`` and ``jsonschema`` are imported on first use, as :mod:`ecp_core.contracts.schema` does
(ADR 0052).
"""

import functools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why."""


_HEX = frozenset("0123456789abcdefABCDEF")
_UNICODE_DIGITS = 4


def translated(pattern: str) -> str:
    r"""``pattern`` in RE2's syntax: each ECMA-262 ``\uXXXX`` escape as ``\x{XXXX}``."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char != "\\" or index + 1 == len(pattern):
            out.append(char)
            index += 1
            continue
        escaped = pattern[index + 1]
        digits = pattern[index + 2 : index + 2 + _UNICODE_DIGITS]
        if escaped == "u" and len(digits) == _UNICODE_DIGITS and set(digits) <= _HEX:
            out.append(f"\\x{{{digits}}}")
            index += 2 + _UNICODE_DIGITS
        else:  # any other escape (an escaped backslash included) passes whole
            out.append(pattern[index : index + 2])
            index += 2
    return "".join(out)


@functools.cache
def _options() -> Any:  # noqa: ANN401 - re2 ships no type information
    import re2  # noqa: PLC0415 - on first use (ADR 0052)

    options = re2.Options()
    options.log_errors = False  # a refused pattern is the caller's answer, not a log line
    return options


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:  # noqa: ANN401 - re2 ships no type information
    """``pattern`` compiled by RE2; :class:`PatternError` when RE2 cannot run it."""
    import re2  # noqa: PLC0415 - on first use (ADR 0052)

    try:
        return re2.compile(translated(pattern), _options())
    except UnicodeEncodeError:
        raise PatternError("it holds a lone surrogate, which is no Unicode character") from None
    except re2.error as refused:
        reason = refused.args[0] if refused.args else refused
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's unanchored match).

    RE2 reads UTF-8: a lone surrogate in ``text`` (no Unicode character, so never in JSON
    that was read) is matched as U+FFFD.
    """
    try:
        return compiled(pattern).search(text) is not None
    except UnicodeEncodeError:
        valid = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return compiled(pattern).search(valid) is not None


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` cannot be a schema's regular expression here, or None when it can."""
    if not isinstance(pattern, str):
        return None  # the meta-schema says what type it must have
    try:
        compiled(pattern)
    except PatternError as refused:
        return f"is not a regular expression this service runs in linear time (RE2): {refused}"
    return None


def _pattern(
    validator: Any,  # noqa: ANN401 - jsonschema's Validator protocol lacks descend
    pattern: str,
    instance: Any,  # noqa: ANN401
    schema: Mapping[str, Any],  # noqa: ARG001 - every keyword function takes it
) -> Iterator["ValidationError"]:
    """``pattern``: a string must match it somewhere."""
    from jsonschema import exceptions  # noqa: PLC0415 - on first use

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield exceptions.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any,  # noqa: ANN401 - jsonschema's Validator protocol lacks descend
    patterns: Mapping[str, Any],
    instance: Any,  # noqa: ANN401
    schema: Mapping[str, Any],  # noqa: ARG001 - every keyword function takes it
) -> Iterator["ValidationError"]:
    """``patternProperties``: each property whose name matches a pattern meets its schema."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The properties neither ``properties`` nor a ``patternProperties`` key covers."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        name
        for name in instance
        if name not in properties and not any(search(p, name) for p in patterns)
    ]


def _additional_properties(
    validator: Any,  # noqa: ANN401 - jsonschema's Validator protocol lacks descend
    additional: Any,  # noqa: ANN401
    instance: Any,  # noqa: ANN401
    schema: Mapping[str, Any],
) -> Iterator["ValidationError"]:
    """``additionalProperties``: what no other property keyword covers meets it."""
    from jsonschema import exceptions  # noqa: PLC0415 - on first use

    if not validator.is_type(instance, "object"):
        return
    extras = sorted(_additional(instance, schema))
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        names = ", ".join(repr(extra) for extra in extras)
        if "patternProperties" in schema:
            patterns = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield exceptions.ValidationError(
                f"{names} {verb} not match any of the regexes: {patterns}"
            )
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield exceptions.ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


@functools.cache
def linear(cls: "type[Validator]") -> "type[Validator]":
    """``cls`` with its pattern keywords evaluated by RE2 (those of its dialect)."""
    from jsonschema import validators  # noqa: PLC0415 - on first use

    replaced = {name: fn for name, fn in _KEYWORDS.items() if name in cls.VALIDATORS}
    extended: type[Validator] = validators.extend(cls, replaced)  # type: ignore[no-untyped-call]
    return extended


def _keywords_used(schema: Any, data: frozenset[str]) -> Iterator[str]:  # noqa: ANN401
    """Every object key in ``schema``, skipping the values of the ``data`` keywords."""
    if isinstance(schema, list):
        for item in schema:
            yield from _keywords_used(item, data)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            yield key
            if key not in data:
                yield from _keywords_used(value, data)


def key_problems(
    schema: Any,  # noqa: ANN401
    data: frozenset[str],
    loc: tuple[str | int, ...] = (),
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each ``patternProperties`` key RE2 cannot run, as (location of the object, why).

    Older dialects' meta-schemas (Draft 3 and 4) do not say these keys are regular expressions,
    so the meta-schema's own check misses them there.
    """
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from key_problems(item, data, (*loc, index))
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key == "patternProperties" and isinstance(value, dict):
            for pattern in value:
                problem = pattern_problem(pattern)
                if problem is not None:
                    yield (*loc, key), problem
        if key not in data:
            yield from key_problems(value, data, (*loc, key))


def unevaluated_beside_patterns(schema: Any, data: frozenset[str]) -> bool:  # noqa: ANN401
    """Whether ``schema`` has both ``unevaluatedProperties`` and ``patternProperties``.

    Checked by key anywhere outside ``data`` keywords: a property merely named so counts too,
    which refuses a little more than needed and never less.
    """
    used = set(_keywords_used(schema, data))
    return {"unevaluatedProperties", "patternProperties"} <= used


__all__ = [
    "PatternError",
    "compiled",
    "key_problems",
    "linear",
    "pattern_problem",
    "search",
    "translated",
    "unevaluated_beside_patterns",
]
