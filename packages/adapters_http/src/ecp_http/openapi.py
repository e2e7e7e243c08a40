"""The OpenAPI 3.1 document, generated from the operations and the attrs models they name.

Every model becomes a schema in ``components/schemas`` under its class name (enums too), referred
to by ``$ref``. Constraints declared with ``ecp_core.constraints`` in ``Annotated`` metadata are
rendered as JSON Schema keywords; a ``Text`` pattern, which the converter applies with
``re.fullmatch``, is anchored as ``^(?:pattern)$``. "No extras" models say
``additionalProperties: false``.
"""

import enum
import http
import inspect
import re
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from importlib import metadata
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from uuid import UUID

import attrs

from ecp_core.constraints import (
    Constraint,
    Items,
    Range,
    Text,
    constraints_of,
    forbids_extras,
    optional_inner,
)
from ecp_core.wire import unstructure
from ecp_http.problems import PROBLEM_JSON, STATUS_BY_CODE
from ecp_http.query import description, field_types, parameters
from ecp_http.routing import Operation

OPENAPI_VERSION = "3.1.0"
TITLE = "ECP"
DESCRIPTION = (
    "ECP, a governed workflow service: versioned workflow graphs whose nodes can pause for a "
    "human approval and that a policy can refuse to run, with a hash-chained, signed audit "
    "record of every node attempt. Errors are RFC 9457 problem details "
    "(`application/problem+json`); timestamps are RFC 3339 in UTC with `Z`."
)
SECURITY_SCHEMES: dict[str, Any] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "An HS256 JWT with `sub`, `tenant_id`, `roles`, `iat` and `exp` claims.",
    },
    "apiKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "A project API key.",
    },
}
PROBLEM = "Problem"

_PATH_PARAM = re.compile(r"{([^{}]+)}")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _whitespace_class() -> str:
    """The characters ``str.isspace`` accepts (what ``str.strip`` removes) as a regex class body."""
    codes = [code for code in range(sys.maxunicode + 1) if chr(code).isspace()]
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])

    def escape(code: int) -> str:
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"  # noqa: PLR2004

    return "".join(
        escape(low) if low == high else f"{escape(low)}-{escape(high)}" for low, high in ranges
    )


_WS = _whitespace_class()
TRIMMED_PATTERN = f"^(?:[^{_WS}](?:[\\s\\S]*[^{_WS}])?)?$"
"""No leading or trailing whitespace (the empty string is left to ``minLength``)."""
NO_WHITESPACE_PATTERN = f"^[^{_WS}]*$"
"""No whitespace anywhere."""


def anchored(pattern: str) -> str:
    """A ``re.fullmatch`` pattern as an ECMA-262 ``pattern`` (which JSON Schema searches)."""
    return f"^(?:{pattern})$"


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


def _text(constraint: Text) -> tuple[dict[str, Any], list[str]]:
    keywords: dict[str, Any] = {}
    if constraint.min_length:
        keywords["minLength"] = constraint.min_length
    if constraint.max_length is not None:
        keywords["maxLength"] = constraint.max_length
    patterns = [] if constraint.pattern is None else [anchored(constraint.pattern)]
    if constraint.trimmed:
        patterns.append(TRIMMED_PATTERN)
    if constraint.no_whitespace:
        patterns.append(NO_WHITESPACE_PATTERN)
    return keywords, patterns


def _items(constraint: Items) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    if constraint.min_items:
        keywords["minItems"] = constraint.min_items
    if constraint.max_items is not None:
        keywords["maxItems"] = constraint.max_items
    if constraint.unique:
        keywords["uniqueItems"] = True
    return keywords


def _range(constraint: Range) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    if constraint.minimum is not None:
        keywords["minimum"] = constraint.minimum
    if constraint.maximum is not None:
        keywords["maximum"] = constraint.maximum
    return keywords


def _apply(schema: dict[str, Any], constraints: Iterable[Constraint]) -> dict[str, Any]:
    """Render constraints onto ``schema`` as JSON Schema keywords.

    JSON Schema has one ``pattern`` per schema: further patterns go into ``allOf``. ``AwareUtc``
    adds nothing: a ``date-time`` carries its offset and the converter normalises it to UTC.
    """
    result = dict(schema)
    patterns: list[str] = []
    for constraint in constraints:
        if isinstance(constraint, Text):
            keywords, found = _text(constraint)
            result.update(keywords)
            patterns += found
        elif isinstance(constraint, Items):
            result.update(_items(constraint))
        elif isinstance(constraint, Range):
            result.update(_range(constraint))
    if patterns:
        result["pattern"] = patterns[0]
        if patterns[1:]:
            result["allOf"] = [*result.get("allOf", []), *({"pattern": p} for p in patterns[1:])]
    return result


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

    def __init__(self) -> None:
        """Start with no components."""
        self.components: dict[str, dict[str, Any]] = {}
        self._names: dict[type, str] = {}

    def ref(self, cls: type) -> dict[str, Any]:
        """A ``$ref`` to the component for ``cls``, building it on first use."""
        name = self._names.get(cls)
        if name is None:
            name = self._name_for(cls)
            self._names[cls] = name
            self.components[name] = {}  # reserved first: models may refer to themselves
            self.components[name] = (
                self._enum(cls) if issubclass(cls, enum.Enum) else self._model(cls)
            )
        return {"$ref": f"#/components/schemas/{name}"}

    def _name_for(self, cls: type) -> str:
        """The class name; qualified by its module when another class took it already."""
        name = cls.__name__
        if name in self.components or name == PROBLEM:
            name = f"{cls.__module__}.{cls.__qualname__}"
        return _NAME_UNSAFE.sub("_", name)

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
        hints = field_types(cls)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in attrs.fields(cls):
            name = field.alias or field.name
            prop = self.schema(hints.get(field.name, field.type))
            if field.default is attrs.NOTHING:
                required.append(name)
            else:
                default = _default_of(field.default)
                if default is not attrs.NOTHING:
                    prop = {**prop, "default": default}
            properties[name] = prop
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
            return _apply(self.schema(base), found)
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
            "items": False,
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


def _problem_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "An RFC 9457 problem detail; `code` is a stable snake_case identifier.",
        "properties": {
            "type": {"type": "string", "description": "`urn:ecp:error:<code>`"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "code": {"type": "string", "description": "One of the documented error codes."},
            "errors": {
                "type": "array",
                "description": "Each failing field with its location.",
                "items": {
                    "type": "object",
                    "properties": {
                        "loc": {
                            "type": "array",
                            "items": {"type": ["string", "integer"]},
                        },
                        "msg": {"type": "string"},
                    },
                    "required": ["loc", "msg"],
                },
            },
        },
        "required": ["type", "title", "status", "detail", "code"],
    }


def _codes_for(status: int) -> list[str]:
    return sorted(code for code, mapped in STATUS_BY_CODE.items() if mapped == status)


def problem_statuses(operation: Operation) -> list[int]:
    """Error statuses ``operation`` can answer with, as problem+json."""
    statuses = []
    if operation.body is not None:
        statuses += [400, 413, 415]  # not JSON; over the body cap; not application/json in UTF-8
    if not operation.public:
        statuses.append(401)
        if operation.permission is not None:
            statuses.append(403)
    if _PATH_PARAM.search(operation.path) or operation.body is not None:
        # The resource the path or the body names is unknown (or another tenant's).
        statuses.append(404)
    if operation.body is not None:
        statuses.append(409)  # a write may conflict with what is stored
    statuses.append(422)  # an invalid body or parameter, or one the operation does not declare
    return sorted(statuses)


def _parameter(
    name: str, place: str, schema: Mapping[str, Any], *, required: bool, description: str | None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "in": place, "required": required, "schema": schema}
    if description:
        entry["description"] = description
    return entry


def _parameters(operation: Operation, builder: SchemaBuilder) -> list[dict[str, Any]]:
    """Path parameters, then the query model's fields, then the headers read."""
    found = [
        _parameter(name, "path", {"type": "string"}, required=True, description=None)
        for name in _PATH_PARAM.findall(operation.path)
    ]
    model = operation.query
    if model is not None:
        found += [
            _parameter(
                param.name,
                "query",
                builder.schema(param.type),
                required=param.required,
                description=description(model, param.name),
            )
            for param in parameters(model)
        ]
    found += [
        _parameter(
            header.name,
            "header",
            dict(header.schema),
            required=header.required,
            description=header.description,
        )
        for header in operation.headers
    ]
    return found


def _content(media_type: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {media_type: {"schema": schema}}


def _operation(operation: Operation, builder: SchemaBuilder) -> dict[str, Any]:
    media_type = operation.media_type
    entry: dict[str, Any] = {
        "operationId": operation.operation_id,
        "summary": operation.summary,
        "tags": [operation.tag],
    }
    if operation.permission is not None:
        entry["description"] = f"Needs the `{operation.permission.value}` permission."
    declared = _parameters(operation, builder)
    if declared:
        entry["parameters"] = declared
    if operation.body is not None:
        entry["requestBody"] = {
            "required": True,
            "content": _content("application/json", builder.schema(operation.body)),
        }
    responses: dict[str, Any] = {}
    for status in (operation.status, *operation.extra_statuses):
        response: dict[str, Any] = {"description": http.HTTPStatus(status).phrase}
        if status != 204:  # noqa: PLR2004
            schema = {} if operation.response is None else builder.schema(operation.response)
            response["content"] = _content(media_type, schema)
            if status == operation.status:
                for alternate in operation.alternate_media:
                    response["content"][alternate] = {"schema": {"type": "string"}}
        responses[str(status)] = response
    problem_ref = {"$ref": f"#/components/schemas/{PROBLEM}"}
    for status in problem_statuses(operation):
        codes = _codes_for(status)
        description = http.HTTPStatus(status).phrase
        if codes:
            description += f" (code: {', '.join(f'`{code}`' for code in codes)})"
        responses.setdefault(
            str(status),
            {"description": description, "content": _content(PROBLEM_JSON, problem_ref)},
        )
    entry["responses"] = dict(sorted(responses.items()))
    entry["security"] = [] if operation.public else [{"bearerAuth": []}, {"apiKey": []}]
    return entry


def _version() -> str:
    try:
        return metadata.version("ecp-http")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def build_document(operations: Sequence[Operation]) -> dict[str, Any]:
    """The OpenAPI 3.1 document describing ``operations``."""
    builder = SchemaBuilder()
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(
            operation, builder
        )
    schemas = dict(sorted(builder.components.items()))
    schemas[PROBLEM] = _problem_schema()
    tags = sorted({operation.tag for operation in operations})
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": TITLE, "version": _version(), "description": DESCRIPTION},
        "tags": [{"name": tag} for tag in tags],
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": SECURITY_SCHEMES},
    }
