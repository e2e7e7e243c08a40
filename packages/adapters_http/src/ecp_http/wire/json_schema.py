"""JSON Schema (2020-12, as OpenAPI 3.1 uses it) of the Python types the wire models declare.

Every model becomes a schema in ``components`` under its class name (enums too), referred to by
``$ref``; two models of one name are an error, so names stay short, unique and stable (ADR
0055). Each property carries its field's description (:mod:`ecp_http.wire.field_docs`); a model with
kinds (:mod:`ecp_http.wire.schema_variants`) becomes a ``oneOf`` discriminated by its tag. Constraints declared with ``ecp_core.constraints`` in ``Annotated`` metadata are
rendered by :mod:`ecp_http.wire.schema_constraints`. "No extras" models say
``additionalProperties: false``.
"""

import enum
import inspect
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from uuid import UUID

import attrs

from ecp_core.constraints import constraints_of, forbids_extras, optional_inner
from ecp_core.wire import unstructure
from ecp_http.wire.field_docs import field_description
from ecp_http.wire.query import field_types
from ecp_http.wire.schema_constraints import with_constraints
from ecp_http.wire.schema_variants import variants_schema

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _is_json(value: Any) -> bool:  # noqa: ANN401
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))  # noqa: PLR0124
    if isinstance(value, list):
        return all(_is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_json(item) for key, item in value.items())
    return False


def _first_paragraph(doc: str | None) -> str | None:
    if not doc:
        return None
    text = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(text.split()) or None


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null: a ``type`` array where that is exact, ``anyOf`` otherwise."""
    if not schema:
        return schema  # anything, null included
    kind = schema.get("type")
    if isinstance(kind, str | list) and not {"enum", "const", "$ref"} & schema.keys():
        kinds: list[Any] = [kind] if isinstance(kind, str) else list(kind)
        if "null" not in kinds:
            kinds.append("null")
        return {**schema, "type": kinds}
    return {"anyOf": [schema, {"type": "null"}]}


def _json_type(value: Any) -> str | None:  # noqa: ANN401
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


_PRIMITIVES: dict[type, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    datetime: {"type": "string", "format": "date-time"},
    date: {"type": "string", "format": "date"},
    Decimal: {"type": "string", "description": "An exact decimal number as a string."},
    UUID: {"type": "string", "format": "uuid"},
    tuple: {"type": "array"},
    list: {"type": "array"},
    dict: {"type": "object"},
}


class SchemaBuilder:
    """Turns Python types into JSON Schema, collecting models in ``components``."""

    def __init__(self, *, reserved: Iterable[str] = ()) -> None:
        """Start with no components; ``reserved`` names are left to the caller's own schemas."""
        self.components: dict[str, dict[str, Any]] = {}
        self._names: dict[type, str] = {}
        self._reserved = frozenset(reserved)

    def ref(self, cls: type) -> dict[str, Any]:
        """A ``$ref`` to the component for ``cls``, building it on first use."""
        name = self._names.get(cls)
        if name is None:
            name = self._name_for(cls)
            self._names[cls] = name
            self.components[name] = {}  # reserved first: models may refer to themselves
            self.components[name] = (
                self._enum(cls)
                if issubclass(cls, enum.Enum)
                else variants_schema(self, cls) or self._model(cls)
            )
        return {"$ref": f"#/components/schemas/{name}"}

    def component(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """Add ``schema`` to ``components`` under ``name`` (not taken yet); a ``$ref`` to it."""
        self._claim(name, f"schema {name!r}")
        self.components[name] = schema
        return {"$ref": f"#/components/schemas/{name}"}

    def _name_for(self, cls: type) -> str:
        """The class name, which no other schema of the document may take."""
        name = _NAME_UNSAFE.sub("_", cls.__name__)
        self._claim(name, f"{cls.__module__}.{cls.__qualname__}")
        return name

    def _claim(self, name: str, what: str) -> None:
        if name in self.components or name in self._reserved:
            msg = f"{what} would take the schema name {name!r}, which is taken: rename one"
            raise TypeError(msg)

    def properties(self, cls: type, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The schemas of the fields ``names`` (Python names) of ``cls``, by wire name."""
        hints = field_types(cls)
        fields = attrs.fields_dict(cls)
        return {
            fields[name].alias or name: self._property(cls, fields[name], hints) for name in names
        }

    def _property(
        self, cls: type, field: "attrs.Attribute[Any]", hints: Mapping[str, Any]
    ) -> dict[str, Any]:
        prop = self.schema(hints.get(field.name, field.type))
        if field.default is not attrs.NOTHING:
            default = _default_of(field.default)
            if default is not attrs.NOTHING:
                prop = {**prop, "default": default}
        description = field_description(cls, field.name)
        return prop if description is None else {**prop, "description": description}

    def _enum(self, cls: type[enum.Enum]) -> dict[str, Any]:
        values = [member.value for member in cls]
        schema: dict[str, Any] = {"enum": values}
        kinds = {_json_type(value) for value in values}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), **schema}
        description = _first_paragraph(cls.__doc__)
        if description:
            schema["description"] = description
        return schema

    def _model(self, cls: type) -> dict[str, Any]:
        properties = self.properties(cls, (field.name for field in attrs.fields(cls)))
        required = [
            field.alias or field.name
            for field in attrs.fields(cls)
            if field.default is attrs.NOTHING
        ]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if forbids_extras(cls):
            schema["additionalProperties"] = False
        description = _first_paragraph(cls.__doc__)
        if description:
            schema["description"] = description
        return schema

    def schema(self, tp: Any) -> dict[str, Any]:  # noqa: ANN401, C901
        """The JSON Schema of ``tp``."""
        if tp is Any or tp is object:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if get_origin(tp) is Annotated:
            base, found = constraints_of(tp)
            return with_constraints(self.schema(base), found)
        inner = optional_inner(tp)
        if inner is not None:
            return _nullable(self.schema(inner))
        origin, args = get_origin(tp), get_args(tp)
        if origin in (Union, types.UnionType):
            return self._union(args)
        if origin is Literal:
            kinds = {_json_type(value) for value in args}
            literal: dict[str, Any] = {"enum": [unstructure(value) for value in args]}
            return {"type": kinds.pop(), **literal} if len(kinds) == 1 else literal
        if isinstance(tp, type):
            simple = self._simple(tp)
            if simple is not None:
                return simple
        if origin is tuple:
            return self._tuple(args)
        if origin in (list, set, frozenset, Sequence):
            item = self.schema(args[0]) if args else {}
            array: dict[str, Any] = {"type": "array", "items": item}
            if origin in (set, frozenset):
                array["uniqueItems"] = True
            return array
        if origin in (dict, Mapping):
            return self._mapping(args)
        msg = f"no JSON Schema for {tp!r}"
        raise TypeError(msg)

    def _simple(self, tp: type) -> dict[str, Any] | None:
        if issubclass(tp, enum.Enum) or attrs.has(tp):
            return self.ref(tp)
        found = _PRIMITIVES.get(tp)
        return None if found is None else dict(found)

    def _tuple(self, args: tuple[Any, ...]) -> dict[str, Any]:
        if not args:  # tuple[()] has no arguments either
            return {"type": "array", "maxItems": 0}
        if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004 - tuple[T, ...]
            return {"type": "array", "items": self.schema(args[0])}
        return {
            "type": "array",
            "prefixItems": [self.schema(arg) for arg in args],
            "minItems": len(args),
            "maxItems": len(args),
        }

    def _mapping(self, args: tuple[Any, ...]) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        if not args:
            return schema
        key, value = args
        key_schema = self.schema(key)
        if key_schema and key_schema != {"type": "string"}:
            schema["propertyNames"] = key_schema
        value_schema = self.schema(value)
        if value_schema:
            schema["additionalProperties"] = value_schema
        return schema

    def _union(self, args: tuple[Any, ...]) -> dict[str, Any]:
        members = [self.schema(arg) for arg in args]
        if any(member == {} for member in members):
            return {}
        schema: dict[str, Any] = {"anyOf": members}
        discriminator = _discriminator(args, self)
        if discriminator is not None:
            schema["discriminator"] = discriminator
        return schema


def _default_of(default: Any) -> Any:  # noqa: ANN401
    """A field default as JSON, or ``attrs.NOTHING`` when it cannot be shown."""
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        if default.takes_self:
            return attrs.NOTHING
        default = default.factory()
    try:
        value = unstructure(default)
    except Exception:  # noqa: BLE001 - an unusual default is left out of the document
        return attrs.NOTHING
    return value if _is_json(value) else attrs.NOTHING


def _discriminator(args: tuple[Any, ...], builder: SchemaBuilder) -> dict[str, Any] | None:
    """A discriminator when every member is a model with a one-value Literal in the same field."""
    if not all(isinstance(arg, type) and attrs.has(arg) for arg in args):
        return None
    common: set[str] | None = None
    tags: dict[type, dict[str, Any]] = {}
    for arg in args:
        literal = {
            field.name: get_args(field.type)[0]
            for field in attrs.fields(arg)
            if get_origin(field.type) is Literal and len(get_args(field.type)) == 1
        }
        tags[arg] = literal
        common = set(literal) if common is None else common & set(literal)
    for name in sorted(common or ()):
        values = [tags[arg][name] for arg in args]
        if len(set(values)) == len(values) and all(isinstance(v, str) for v in values):
            mapping = {tags[arg][name]: builder.ref(arg)["$ref"] for arg in args}
            return {"propertyName": name, "mapping": mapping}
    return None
