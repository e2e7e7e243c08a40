"""JSON Schema checks through the ``jsonschema`` package.

A schema is read in the dialect it declares, Draft 2020-12 when it declares none.
"""

from typing import Any

import jsonschema
from jsonschema import validators

from ecp_core.errors import FieldError


def schema_errors(schema: dict[str, Any]) -> list[FieldError]:
    """Why ``schema`` is not a valid JSON Schema (empty when it is)."""
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return [
        FieldError(loc=tuple(error.absolute_path), msg=error.message)
        for error in cls(cls.META_SCHEMA).iter_errors(schema)
    ]


def payload_errors(schema: dict[str, Any], payload: Any) -> list[FieldError]:  # noqa: ANN401
    """Every place where ``payload`` breaks ``schema``, located by JSON path."""
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    found = sorted(
        cls(schema).iter_errors(payload), key=lambda error: list(map(str, error.absolute_path))
    )
    return [FieldError(loc=tuple(error.absolute_path), msg=error.message) for error in found]
