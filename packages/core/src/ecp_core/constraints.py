"""Field constraints declared once, in the type, and enforced everywhere.

A model field annotated ``Annotated[str, Text(1, 256)]`` is checked when Python code builds the
model (an attrs validator derived by :func:`model`), when the wire converter structures JSON (a
cattrs hook that reports the failing field's location), and is rendered into the OpenAPI schema.
"""

from __future__ import annotations

import functools
import re
import types
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, Union, get_args, get_origin

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Sized
    from datetime import datetime


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class Constraint:
    """A check on an already well-typed value; ``check`` returns a message or ``None``."""

    def check(self, value: Any) -> str | None:  # noqa: ANN401 - constraints apply to any type
        """Return why ``value`` fails, or ``None`` when it passes."""
        raise NotImplementedError


@attrs.frozen
class Text(Constraint):
    """A string of ``min_length`` to ``max_length`` characters, optionally trimmed or patterned."""

    min_length: int = 0
    max_length: int | None = None
    trimmed: bool = False
    no_whitespace: bool = False
    pattern: str | None = None

    def check(self, value: str) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        if len(value) < self.min_length:
            return f"must have at least {self.min_length} characters"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must have at most {self.max_length} characters"
        if self.trimmed and value != value.strip():
            return "must not start or end with whitespace"
        if self.no_whitespace and any(ch.isspace() for ch in value):
            return "must not contain whitespace"
        if self.pattern is not None and _compiled(self.pattern).fullmatch(value) is None:
            return f"must match {self.pattern}"
        return None


@attrs.frozen
class Items(Constraint):
    """A collection of ``min_items`` to ``max_items`` entries, optionally without repeats."""

    min_items: int = 0
    max_items: int | None = None
    unique: bool = False

    def check(self, value: Sized) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        if len(value) < self.min_items:
            return f"must have at least {self.min_items} items"
        if self.max_items is not None and len(value) > self.max_items:
            return f"must have at most {self.max_items} items"
        if self.unique and len(set(value)) != len(value):  # type: ignore[call-overload]
            return "must not repeat an item"
        return None


@attrs.frozen
class Range(Constraint):
    """A number within ``minimum`` and ``maximum``, both inclusive."""

    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: int) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {self.minimum}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {self.maximum}"
        return None


@attrs.frozen
class AwareUtc(Constraint):
    """A timezone-aware datetime in UTC (the converter normalises wire values to UTC)."""

    def check(self, value: datetime) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        offset = value.utcoffset()  # None when naive
        if offset is None:
            return "must be timezone-aware"
        if offset:  # a timedelta is false only when zero
            return "must be in UTC"
        return None


def constraints_of(tp: Any) -> tuple[Any, tuple[Constraint, ...]]:  # noqa: ANN401
    """Split ``Annotated[T, *constraints]`` into ``T`` and its constraints (others: ``()``)."""
    if get_origin(tp) is Annotated:
        base, *extra = get_args(tp)
        return base, tuple(item for item in extra if isinstance(item, Constraint))
    return tp, ()


def optional_inner(tp: Any) -> Any | None:  # noqa: ANN401
    """Return ``T`` for ``T | None``, else ``None``."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [arg for arg in get_args(tp) if arg is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:  # noqa: PLR2004 - T and None
            return args[0]
    return None


WIRE_CHECKED: ContextVar[bool] = ContextVar("WIRE_CHECKED", default=False)
"""True while the wire converter builds models: its hooks have checked every constraint of the
values they pass to ``__init__`` already, so the validators below need not check them twice.
A context variable, so other threads and tasks keep validating."""


def _validator_for(tp: Any) -> Callable[[Any, Any, Any], None] | None:  # noqa: ANN401
    inner = optional_inner(tp)
    nullable = inner is not None
    _, found = constraints_of(inner if nullable else tp)
    if not found:
        return None

    def validate(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:  # noqa: ANN401
        if (value is None and nullable) or WIRE_CHECKED.get():
            return
        for constraint in found:
            problem = constraint.check(value)
            if problem is not None:
                msg = f"{attribute.name} {problem}"
                raise ValueError(msg)

    return validate


def checked(_cls: type, fields: list[attrs.Attribute[Any]]) -> list[attrs.Attribute[Any]]:
    """An attrs ``field_transformer`` adding a validator for each annotated constraint.

    Use as ``@attrs.frozen(kw_only=True, field_transformer=checked)``, the house model form.
    """
    result = []
    for field in fields:
        validator = _validator_for(field.type)
        if validator is not None:
            combined = (
                validator
                if field.validator is None
                else attrs.validators.and_(field.validator, validator)
            )
            field = field.evolve(validator=combined)  # noqa: PLW2901
        result.append(field)
    return result


_ALLOWS_EXTRAS: set[type] = set()

C = TypeVar("C", bound=type)


def allow_extras(cls: C) -> C:
    """Let the wire converter ignore unknown keys for ``cls`` (every other model rejects them)."""
    _ALLOWS_EXTRAS.add(cls)
    return cls


def forbids_extras(cls: type) -> bool:
    """Say whether ``cls`` is a "no extras" schema (the default)."""
    return cls not in _ALLOWS_EXTRAS
