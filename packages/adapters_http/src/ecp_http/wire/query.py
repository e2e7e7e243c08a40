"""Query strings as models: an operation names an attrs class; its fields are the parameters.

One declaration serves the routing and the OpenAPI document. A field's name is the parameter's
name; no default means required; ``T | None`` with a None default means optional. The text has
been checked for shape by the routing already (unknown, repeated, unstorable, ``minLength``);
:func:`structure_query` then reads the values:

1. Whole numbers (``Annotated[int, Range(low, high)]``) and choices (``Literal["a", "b"]``) are
   read one at a time, in declaration order, each refused on its own as ``invalid <name>``:
   ASCII digits only, no more of them than ``high`` has, within the range.
2. The rest is structured by the wire converter, every failing field named at once under
   ``the query is invalid``, each location starting with ``"query"``.

:func:`described` attaches the parameters' descriptions to a model (for the OpenAPI document).
"""

import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs

from ecp_core.constraints import Range, Text, constraints_of, optional_inner
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.wire import structure

T = TypeVar("T")
C = TypeVar("C", bound=type)

_DESCRIPTIONS: dict[type, dict[str, str]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """Field types of an attrs class, resolving string annotations when there are any."""
    if all(not isinstance(field.type, str) for field in attrs.fields(cls)):
        return {field.name: field.type for field in attrs.fields(cls)}
    return typing.get_type_hints(cls, include_extras=True)


def described(**descriptions: str) -> Callable[[C], C]:
    """Attach descriptions of ``cls``'s parameters (by name) for the OpenAPI document."""

    def attach(cls: C) -> C:
        _DESCRIPTIONS[cls] = descriptions
        return cls

    return attach


def description(model: type, name: str) -> str | None:
    """The description of parameter ``name`` of ``model`` (or of a model it extends)."""
    for cls in model.__mro__:
        found = _DESCRIPTIONS.get(cls, {}).get(name)
        if found is not None:
            return found
    return None


QUERY_NAME = "query_name"
"""Field metadata: the query parameter's name when it differs from the field's (``from``)."""


@attrs.frozen
class Parameter:
    """One query parameter of a model: its name, its type without ``| None``, whether required."""

    name: str
    type: Any
    required: bool
    key: str = ""
    """The model's own name for it (its alias), when the query's name cannot be one (``from``)."""


def parameters(model: type) -> tuple[Parameter, ...]:
    """The parameters ``model`` declares, in declaration order."""
    return _parameters(model)


@functools.cache
def _parameters(model: type) -> tuple[Parameter, ...]:
    hints = field_types(model)
    return tuple(
        Parameter(
            name=field.metadata.get(QUERY_NAME, field.alias or field.name),
            type=optional_inner(hints[field.name]) or hints[field.name],
            required=field.default is attrs.NOTHING,
            key=field.alias or field.name,
        )
        for field in attrs.fields(model)
    )


def min_length(parameter: Parameter) -> int:
    """The fewest characters the parameter's text may have (its ``Text`` constraint)."""
    _, found = constraints_of(parameter.type)
    return max((c.min_length for c in found if isinstance(c, Text)), default=0)


def _invalid(name: str, msg: str) -> ValidationFailed:
    return ValidationFailed(f"invalid {name}", errors=[FieldError(loc=("query", name), msg=msg)])


def _whole(parameter: Parameter, raw: str) -> int | None:
    """``raw`` as the parameter's whole number; None when the parameter is not one."""
    base, found = constraints_of(parameter.type)
    bounds = next((c for c in found if isinstance(c, Range)), None)
    if base is not int or bounds is None or bounds.minimum is None or bounds.maximum is None:
        return None
    low, high = bounds.minimum, bounds.maximum
    # ASCII digits only: str.isdigit also takes superscripts, circled and fullwidth digits.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= len(str(high))) or not (
        low <= int(raw) <= high
    ):
        raise _invalid(parameter.name, f"must be a whole number from {low} to {high}")
    return int(raw)


def _choice(parameter: Parameter, raw: str) -> str | None:
    """``raw`` as one of the parameter's literal choices; None when it has no such choices."""
    if get_origin(parameter.type) is not Literal:
        return None
    choices = get_args(parameter.type)
    if not all(isinstance(choice, str) for choice in choices):
        return None
    if raw not in choices:
        raise _invalid(parameter.name, "must be " + " or ".join(choices))
    return raw


def structure_query(model: type[T], query: Mapping[str, str]) -> T:
    """Build ``model`` from a checked query string (see the module's docstring for the order)."""
    values: dict[str, Any] = {}
    for parameter in parameters(model):
        raw = query.get(parameter.name)
        if raw is None:
            continue
        whole = _whole(parameter, raw)
        values[parameter.key] = whole if whole is not None else _choice(parameter, raw) or raw
    try:
        return structure(values, model, what="the query")
    except ValidationFailed as exc:
        named = {parameter.key: parameter.name for parameter in parameters(model)}
        raise ValidationFailed(
            exc.detail,
            errors=[
                FieldError(loc=("query", *(named.get(str(p), p) for p in e.loc)), msg=e.msg)
                for e in exc.errors
            ],
        ) from None
