"""Models with kinds, described as a ``oneOf`` discriminated by their tag (ADR 0055).

``NodeDefinition`` is one attrs model whose optional fields apply by ``kind``
(``ecp_core.graphs.node_kinds`` states which). Its schema is a ``oneOf`` of one object schema
per kind (``ActionNode``, ``ApprovalNode`` ...): each has ``kind`` as a constant, the fields
every node has, the fields the kind requires (not null, a list not empty) and those it allows,
and a ``oneOf`` over the fields of which it takes exactly one (a wait node's time).
The fields a kind does not take may still appear with their empty value (null, or an empty
list), as the service writes them in its answers; any other value is refused.
"""

import inspect
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import attrs

from ecp_core.constraints import forbids_extras, optional_inner
from ecp_core.graphs.definition import NodeDefinition
from ecp_core.graphs.node_kinds import NODE_FIELDS, KindFields
from ecp_http.wire.field_docs import field_description
from ecp_http.wire.query import field_types


class Builder(Protocol):
    """What this module needs of ``ecp_http.wire.json_schema.SchemaBuilder``."""

    def schema(self, tp: Any) -> dict[str, Any]:  # noqa: ANN401
        """The JSON Schema of ``tp``."""

    def properties(self, cls: type, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The schemas of the fields ``names`` of ``cls``, by wire name."""

    def component(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """Add a named schema; a ``$ref`` to it."""


@attrs.frozen(kw_only=True)
class Kinds:
    """How a model's kinds are told apart: the tag field, and each kind's fields."""

    tag: str
    fields: Mapping[Any, KindFields]


KINDS: Mapping[type, Kinds] = {NodeDefinition: Kinds(tag="kind", fields=NODE_FIELDS)}
"""Every model described by kind."""


def _required(builder: Builder, cls: type, name: str) -> dict[str, Any]:
    """A required field's schema: never null; a list with at least one item."""
    hint = field_types(cls)[name]
    schema = builder.schema(optional_inner(hint) or hint)
    if schema.get("type") == "array":
        schema = {**schema, "minItems": max(1, schema.get("minItems", 0))}
    description = field_description(cls, name)
    return schema if description is None else {**schema, "description": description}


def _absent(builder: Builder, cls: type, name: str) -> dict[str, Any]:
    """A field the kind does not take: its empty default (null or an empty list) only."""
    if attrs.fields_dict(cls)[name].default is None:
        schema: dict[str, Any] = {"type": "null"}
    else:
        hint = field_types(cls)[name]
        schema = {**builder.schema(optional_inner(hint) or hint), "maxItems": 0}
    return {**schema, "description": "Not taken by this kind of node: left out, or empty."}


def _variant(builder: Builder, cls: type, kinds: Kinds, value: str, fields: KindFields) -> str:
    """Add the object schema of one kind; its ``$ref``."""
    common = [
        field.name
        for field in attrs.fields(cls)
        if field.default is attrs.NOTHING and field.name != kinds.tag
    ]
    properties: dict[str, Any] = {
        kinds.tag: {"type": "string", "const": value, "description": f"Always `{value}`."},
        **builder.properties(cls, common),
        **{name: _required(builder, cls, name) for name in fields.required},
        **builder.properties(cls, (*fields.optional, *fields.one_of)),
    }
    taken = {kinds.tag, *common, *fields.required, *fields.optional, *fields.one_of}
    for other in attrs.fields(cls):
        if other.name not in taken:
            properties[other.alias or other.name] = _absent(builder, cls, other.name)
    schema: dict[str, Any] = {
        "type": "object",
        "description": fields.description,
        "properties": properties,
        "required": [kinds.tag, *common, *fields.required],
    }
    if fields.one_of:  # exactly one of them is given, and not null
        schema["oneOf"] = [
            {"required": [name], "properties": {name: _required(builder, cls, name)}}
            for name in fields.one_of
        ]
    if forbids_extras(cls):
        schema["additionalProperties"] = False
    return str(builder.component(fields.title, schema)["$ref"])


def variants_schema(builder: Builder, cls: type) -> dict[str, Any] | None:
    """The ``oneOf`` schema of a model with kinds; None for any other class."""
    kinds = KINDS.get(cls)
    if kinds is None:
        return None
    mapping = {
        str(value): _variant(builder, cls, kinds, str(value), fields)
        for value, fields in kinds.fields.items()
    }
    schema: dict[str, Any] = {
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": kinds.tag, "mapping": mapping},
    }
    if cls.__doc__:
        schema["description"] = " ".join(inspect.cleandoc(cls.__doc__).split("\n\n")[0].split())
    return schema
