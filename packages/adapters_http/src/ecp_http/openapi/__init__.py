"""The OpenAPI 3.1 document, generated from the operations and the attrs models they name.

This module assembles the document: paths and operations, their parameters and responses, the
problem details each can answer with, and the security schemes. ``ecp_http.wire.json_schema`` turns
the models into the schemas under ``components/schemas``.
"""

import http
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ecp_http import version
from ecp_http.openapi.examples import REQUEST, RESPONSE, example
from ecp_http.openapi.problems import PROBLEM, problem_responses, problem_schema
from ecp_http.server.routing import Operation
from ecp_http.wire.json_schema import SchemaBuilder
from ecp_http.wire.query import description, parameters

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
_PATH_PARAM = re.compile(r"{([^{}:]+)(?::[a-z]+)?}")


def document_path(path: str) -> str:
    """``path`` as OpenAPI writes it: a parameter's converter (``{tile:path}``) left out."""
    return _PATH_PARAM.sub(lambda found: "{" + found[1] + "}", path)


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


def _content(
    media_type: str, schema: dict[str, Any], operation_id: str = "", part: str = ""
) -> dict[str, Any]:
    """One media type's schema, with the operation's recorded example of ``part`` if any."""
    found, value = example(operation_id, part) if operation_id else (False, None)
    return {media_type: {"schema": schema, "example": value} if found else {"schema": schema}}


def _success_schema(operation: Operation, builder: SchemaBuilder) -> dict[str, Any]:
    """The answer's model; text for a text media type, bytes for any other that is not JSON."""
    media = operation.media_type
    if media == "application/json" or media.endswith("+json"):
        return {} if operation.response is None else builder.schema(operation.response)
    if media.startswith("text/"):
        return {"type": "string"}
    return {"type": "string", "format": "binary"}


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
        schema = builder.schema(operation.body)
        entry["requestBody"] = {
            "required": not operation.optional_body,
            "content": _content("application/json", schema, operation.operation_id, REQUEST),
        }
    responses: dict[str, Any] = {}
    for status in (operation.status, *operation.extra_statuses):
        response: dict[str, Any] = {"description": http.HTTPStatus(status).phrase}
        if status != 204:  # noqa: PLR2004
            schema = _success_schema(operation, builder)
            main = status == operation.status
            named = operation.operation_id if main else ""
            response["content"] = _content(media_type, schema, named, RESPONSE)
            if main:
                for alternate in operation.alternate_media:
                    response["content"][alternate] = {"schema": {"type": "string"}}
        responses[str(status)] = response
    for status, response in problem_responses(operation).items():
        responses.setdefault(str(status), response)
    entry["responses"] = dict(sorted(responses.items()))
    entry["security"] = [] if operation.public else [{"bearerAuth": []}, {"apiKey": []}]
    return entry


def build_document(operations: Sequence[Operation]) -> dict[str, Any]:
    """The OpenAPI 3.1 document describing ``operations``."""
    builder = SchemaBuilder(reserved={PROBLEM})
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(document_path(operation.path), {})[operation.method.lower()] = _operation(
            operation, builder
        )
    schemas = dict(sorted(builder.components.items()))
    schemas[PROBLEM] = problem_schema()
    tags = sorted({operation.tag for operation in operations})
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": TITLE, "version": version(), "description": DESCRIPTION},
        "tags": [{"name": tag} for tag in tags],
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": SECURITY_SCHEMES},
    }
