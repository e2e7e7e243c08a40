"""The parameters schema of a template, and the arguments it takes (ADR 0045).

A template's ``parameters`` is a JSON Schema of ``type: object``; its ``properties`` declare the
parameters. The arguments of an instantiation name only declared parameters; a parameter left
out takes the ``default`` its property declares; the arguments so completed must satisfy the
whole schema, and every parameter the graph uses must then have a value.
"""

from collections.abc import Collection, Mapping
from typing import Any

from ecp_core.contracts.schema import payload_errors, schema_errors
from ecp_core.errors import FieldError, SchemaNotApplicable

Loc = tuple[str | int, ...]


def checked_payload(schema: dict[str, Any], payload: Any, loc: Loc) -> list[FieldError]:  # noqa: ANN401
    """Where ``payload`` breaks ``schema``, under ``loc``.

    A reference that cannot be followed, one that loops without consuming the payload (such
    as ``{"$ref": "#"}`` at the root), or a pattern that is no regular expression, is an error
    of the parameters schema, never a crash.
    """
    try:
        found = payload_errors(schema, payload)
    except SchemaNotApplicable as broken:
        return [FieldError(loc=("parameters",), msg=broken.detail)]
    return [FieldError(loc=(*loc, *e.loc), msg=e.msg) for e in found]


def declared(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The declared parameters: the schema's ``properties`` (empty when it has none usable)."""
    properties = schema.get("properties")
    return dict(properties) if isinstance(properties, dict) else {}


def defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Each declared parameter's ``default``, for those that declare one."""
    return {
        name: prop["default"]
        for name, prop in declared(schema).items()
        if isinstance(prop, dict) and "default" in prop
    }


def parameters_errors(schema: dict[str, Any], loc: Loc = ("parameters",)) -> list[FieldError]:
    """Why ``schema`` cannot describe a template's arguments (empty when it can).

    It must be a valid JSON Schema, of ``type: object``, and each default must satisfy it.
    """
    errors = [FieldError(loc=(*loc, *e.loc), msg=e.msg) for e in schema_errors(schema)]
    if errors:
        return errors
    if schema.get("type") != "object":
        errors.append(FieldError(loc=(*loc, "type"), msg="must be 'object': arguments are named"))
        return errors
    own = defaults(schema)
    found = checked_payload(schema, own, ("defaults",))
    broken = [e for e in found if e.loc[0] != "defaults"]  # the schema cannot be applied
    return broken or [
        FieldError(loc=(*loc, "properties", e.loc[1], "default", *e.loc[2:]), msg=e.msg)
        for e in found
        if len(e.loc) > 1 and e.loc[1] in own
    ]


def completed(
    schema: dict[str, Any],
    arguments: Mapping[str, Any],
    used: Collection[str] = (),
    loc: Loc = ("arguments",),
) -> tuple[dict[str, Any], list[FieldError]]:
    """The arguments with the defaults of those left out, and why they do not fit ``schema``.

    An argument that names no declared parameter is refused, as an unknown property is; a
    parameter in ``used`` (the graph takes it) that has no default is required.
    """
    known = declared(schema)
    errors = [
        FieldError(loc=(*loc, name), msg="no such parameter")
        for name in sorted(arguments)
        if name not in known
    ]
    values = {**defaults(schema), **arguments}
    needed = set(used) - set(values)
    if needed:
        schema = {**schema, "required": sorted({*schema.get("required", ()), *needed})}
    errors += checked_payload(schema, values, loc)
    if not errors:  # a schema whose dialect ignores "required" beside "$ref" still names them
        errors = [
            FieldError(loc=(*loc, name), msg="the graph uses this parameter: give it")
            for name in sorted(needed)
        ]
    return values, errors


__all__ = ["completed", "declared", "defaults", "parameters_errors"]
