"""The problem details of the OpenAPI document: which an operation can give, and their schema.

The error statuses of an operation are derived from its declaration (ADR 0055), so that a
plain read lists no 409 and an operation without a body no 413; each carries the error codes
it can hold and an example.
"""

import http
import json
import re
from typing import Any

from ecp_http.server.problems import PROBLEM_JSON, STATUS_BY_CODE, problem
from ecp_http.server.routing import Operation

PROBLEM = "Problem"
"""The component name of the problem detail schema; no model takes it."""

_READS = frozenset({"GET", "HEAD"})
_PATH_PARAM = re.compile(r"{[^{}]+}")


def problem_schema() -> dict[str, Any]:
    """The schema of an RFC 9457 problem detail as the service writes it."""
    return {
        "type": "object",
        "description": "An RFC 9457 problem detail; `code` is a stable snake_case identifier.",
        "properties": {
            "type": {"type": "string", "description": "`urn:ecp:error:<code>`."},
            "title": {"type": "string", "description": "The status's reason phrase."},
            "status": {"type": "integer", "description": "The HTTP status of the answer."},
            "detail": {"type": "string", "description": "What went wrong, for a person."},
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
                            "description": "Where the field is: keys and list indexes, "
                            "starting with `query` for a query parameter.",
                        },
                        "msg": {"type": "string", "description": "What is wrong with it."},
                    },
                    "required": ["loc", "msg"],
                },
            },
        },
        "required": ["type", "title", "status", "detail", "code"],
    }


def _takes_input(operation: Operation) -> bool:
    return operation.body is not None or operation.query is not None or bool(operation.headers)


def problem_codes(operation: Operation, status: int) -> list[str]:
    """The error codes of ``status`` that ``operation`` can answer with."""
    if status == 400 and operation.body is not None:  # noqa: PLR2004
        return ["malformed_json"]
    if status == 403 and not operation.public:  # noqa: PLR2004
        return ["forbidden", *operation.forbidden_codes]
    if status == 422 and not _takes_input(operation):  # noqa: PLR2004
        return ["unknown_parameter"]
    return sorted(code for code, mapped in STATUS_BY_CODE.items() if mapped == status)


def problem_statuses(operation: Operation) -> list[int]:
    """Error statuses ``operation`` can answer with, as problem+json.

    400 only with a JSON body; 413 and 415 only with a body of any kind; 401 only when the caller
    is authenticated, 403 only when a permission is needed; 404 only when a path parameter or a
    written body names a resource; 409 only on an authenticated write; 422 on every operation,
    since each refuses a query parameter it does not declare.
    """
    reads_body = operation.body is not None or operation.raw_body or operation.form
    writes = operation.method not in _READS
    statuses = [422]
    if operation.body is not None:
        statuses.append(400)  # not JSON
    if reads_body:
        statuses += [413, 415]  # over the body cap; not the expected media type in UTF-8
    if not operation.public:
        statuses.append(401)
        if operation.permission is not None:
            statuses.append(403)
    if _PATH_PARAM.search(operation.path) or (writes and operation.body is not None):
        statuses.append(404)  # the resource named is unknown (or another tenant's)
    if writes and not operation.public:
        statuses.append(409)  # a write may conflict with what is stored
    return sorted(statuses)


def _example(status: int, code: str) -> Any:  # noqa: ANN401 - JSON
    """The body the service writes for ``code`` (with a made-up detail)."""
    detail = f"An example of {code.replace('_', ' ')}."
    return json.loads(bytes(problem(status, code, detail).body))


def problem_responses(operation: Operation) -> dict[int, dict[str, Any]]:
    """The documented problem answers of ``operation`` by status, each with an example."""
    responses: dict[int, dict[str, Any]] = {}
    for status in problem_statuses(operation):
        codes = problem_codes(operation, status)
        description = http.HTTPStatus(status).phrase
        if codes:
            description += f" (code: {', '.join(f'`{code}`' for code in codes)})"
        content: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{PROBLEM}"}}
        if codes:
            content["example"] = _example(status, codes[0])
        responses[status] = {"description": description, "content": {PROBLEM_JSON: content}}
    return responses
