"""JSON Schema checks through the ``jsonschema`` package.

A schema is read in the dialect it declares, Draft 2020-12 when it declares none. A schema stands
alone: nothing is ever fetched, so every ``$ref`` must point into the schema itself, and every
``pattern`` must be a regular expression RE2 runs, evaluated by RE2 in linear time (ADR 0097,
:mod:`ecp_core.contracts.patterns`). A valid schema that still cannot be applied to a
payload (a reference loop that consumes nothing, such as ``{"$ref": "#"}``) is refused with
:class:`SchemaNotApplicable`, never a crash.

``jsonschema`` is imported on the first check, not with this module: it and its reference
resolver weigh more than the rest of the core's imports put together (ADR 0052).
"""

import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ecp_core.errors import FieldError, SchemaNotApplicable

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

Loc = tuple[str | int, ...]

_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, never subschemas: a ``$ref`` inside them is not a reference."""


def _points_to(root: Any, ref: str) -> bool:  # noqa: ANN401
    """Whether ``ref`` is ``#`` or a JSON pointer fragment that names a place in ``root``."""
    if not ref.startswith("#") or (len(ref) > 1 and not ref.startswith("#/")):
        return False
    here = root
    for raw in ref[2:].split("/") if len(ref) > 1 else ():
        step = urllib.parse.unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(here, dict) and step in here:
            here = here[step]
        elif isinstance(here, list) and step.isdigit() and int(step) < len(here):
            here = here[int(step)]
        else:
            return False
    return True


def _reference_errors(schema: Any, root: Any, loc: Loc) -> Iterator[FieldError]:  # noqa: ANN401
    """Each ``$ref`` or ``$dynamicRef`` that is not a local pointer into the schema itself."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _reference_errors(item, root, (*loc, index))
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in ("$ref", "$dynamicRef") and isinstance(value, str):
            if not _points_to(root, value):
                msg = "must be '#' or a JSON pointer into this schema ('#/...')"
                yield FieldError(loc=(*loc, key), msg=msg)
        elif key not in _DATA_KEYWORDS:
            yield from _reference_errors(value, root, (*loc, key))


def _validator_class(schema: dict[str, Any]) -> "type[Validator]":
    """The validator of the dialect ``schema`` declares, Draft 2020-12 when it declares none."""
    import jsonschema  # noqa: PLC0415 - deferred to the first check (ADR 0052)

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def _linear_class(schema: dict[str, Any]) -> "type[Validator]":
    """:func:`_validator_class` with its patterns evaluated by RE2 (ADR 0097)."""
    from ecp_core.contracts.patterns import linear  # noqa: PLC0415 - imports jsonschema

    return linear(_validator_class(schema))


def _regex_errors(schema: dict[str, Any]) -> list[FieldError]:
    """Each ``pattern`` (or ``patternProperties`` key) that RE2 cannot run.

    Also a schema whose ``unevaluatedProperties`` would match ``patternProperties`` keys with
    ``re`` inside ``jsonschema`` (ADR 0097).
    """
    import jsonschema  # noqa: PLC0415 - deferred to the first check (ADR 0052)

    from ecp_core.contracts import patterns  # noqa: PLC0415 - imports jsonschema

    cls = _validator_class(schema)
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("regex", raises=patterns.PatternError)(patterns.compiled)
    errors = [
        FieldError(
            loc=tuple(error.absolute_path),
            msg=patterns.pattern_problem(error.instance) or error.message,
        )
        for error in cls(cls.META_SCHEMA, format_checker=checker).iter_errors(schema)
    ]
    errors += [
        FieldError(loc=loc, msg=msg)
        for loc, msg in patterns.key_problems(schema, _DATA_KEYWORDS)
        if FieldError(loc=loc, msg=msg) not in errors
    ]
    if patterns.unevaluated_beside_patterns(schema, _DATA_KEYWORDS):
        msg = "must not be used with patternProperties in one schema (ADR 0097)"
        errors.append(FieldError(loc=("unevaluatedProperties",), msg=msg))
    return errors


def schema_errors(schema: dict[str, Any]) -> list[FieldError]:
    """Why ``schema`` is not a valid, self-contained JSON Schema (empty when it is)."""
    cls = _validator_class(schema)
    errors = [
        FieldError(loc=tuple(error.absolute_path), msg=error.message)
        for error in cls(cls.META_SCHEMA).iter_errors(schema)
    ]
    errors += _reference_errors(schema, schema, ())
    return errors or _regex_errors(schema)


def payload_errors(schema: dict[str, Any], payload: Any) -> list[FieldError]:  # noqa: ANN401
    """Every place where ``payload`` breaks ``schema``, located by JSON path.

    SchemaNotApplicable when the schema cannot be applied at all (a reference that cannot be
    followed or loops, a pattern RE2 cannot run, ``unevaluatedProperties`` beside
    ``patternProperties``: possible for schemas stored before these were refused).
    """
    from referencing.exceptions import Unresolvable  # noqa: PLC0415 - deferred with jsonschema

    from ecp_core.contracts import patterns  # noqa: PLC0415 - imports jsonschema

    if patterns.unevaluated_beside_patterns(schema, _DATA_KEYWORDS):
        msg = "the schema cannot be applied: unevaluatedProperties beside patternProperties"
        raise SchemaNotApplicable(msg)
    cls = _linear_class(schema)
    try:
        found = sorted(
            cls(schema).iter_errors(payload), key=lambda error: list(map(str, error.absolute_path))
        )
    except (Unresolvable, patterns.PatternError, RecursionError) as broken:
        raise SchemaNotApplicable(f"the schema cannot be applied: {broken}") from broken
    return [FieldError(loc=tuple(error.absolute_path), msg=error.message) for error in found]


__all__ = ["payload_errors", "schema_errors"]
