"""Typed substitution of template parameters: whole JSON values, never text spliced into text.

In a template's graph an object with the single member ``"$param"`` (a string) is a hole: it
becomes the whole value of that argument. An object with the single member ``"$literal"`` is its
value taken verbatim, unexamined, which is how a graph says a literal ``{"$param": ...}`` (or
``{"$literal": ...}``). Object keys are never substituted, and an argument's value is inserted
as given, never examined again.
"""

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from ecp_core.errors import FieldError

PARAM = "$param"
"""The member that makes an object a hole for an argument."""

LITERAL = "$literal"
"""The member that makes an object stand for its value taken verbatim."""

MARKERS = (PARAM, LITERAL)

Loc = tuple[str | int, ...]


def _marker(value: object) -> str | None:
    """Which marker ``value`` is an object of, if any (its only member or not)."""
    if isinstance(value, dict):
        return next((key for key in MARKERS if key in value), None)
    return None


def holes(value: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str | None]]:  # noqa: ANN401
    """Every ``$param`` hole under ``value`` with its location; the name is None when malformed.

    A ``$literal`` object is not looked into.
    """
    marker = _marker(value)
    if marker == PARAM:
        name = value[PARAM]
        yield loc, name if isinstance(name, str) and len(value) == 1 else None
    elif marker == LITERAL:
        return
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from holes(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from holes(item, (*loc, index))


def _literal_errors(value: Any, loc: Loc) -> Iterator[FieldError]:  # noqa: ANN401
    """A ``$literal`` object must have no other member."""
    marker = _marker(value)
    if marker == LITERAL:
        if len(value) != 1:
            yield FieldError(loc=loc, msg=f"an object with {LITERAL!r} has no other member")
    elif marker is None and isinstance(value, dict):
        for key, item in value.items():
            yield from _literal_errors(item, (*loc, key))
    elif marker is None and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _literal_errors(item, (*loc, index))


def hole_errors(value: Any, declared: Mapping[str, object], loc: Loc = ()) -> list[FieldError]:  # noqa: ANN401
    """Why the holes under ``value`` are not well formed or name undeclared parameters."""
    errors = list(_literal_errors(value, loc))
    for where, name in holes(value, loc):
        if name is None:
            msg = f"a {PARAM!r} object has exactly one member, the parameter's name (a string)"
            errors.append(FieldError(loc=where, msg=msg))
        elif name not in declared:
            errors.append(FieldError(loc=where, msg=f"no parameter {name!r} is declared"))
    return errors


def used_parameters(value: Any) -> set[str]:  # noqa: ANN401
    """The names of the parameters the holes under ``value`` take."""
    return {name for _, name in holes(value) if name is not None}


def substitute(value: Any, arguments: Mapping[str, Any]) -> Any:  # noqa: ANN401
    """``value`` with each hole replaced by a copy of its argument and each literal unwrapped.

    The holes must be well formed (see :func:`hole_errors`) and every name in ``arguments``
    (KeyError otherwise).
    """
    marker = _marker(value)
    if marker == PARAM:
        return copy.deepcopy(arguments[value[PARAM]])
    if marker == LITERAL:
        return copy.deepcopy(value[LITERAL])
    if isinstance(value, dict):
        return {key: substitute(item, arguments) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, arguments) for item in value]
    return value


__all__ = ["LITERAL", "PARAM", "hole_errors", "holes", "substitute", "used_parameters"]
