"""Recorded examples of the API, one pair of files per operation (ADR 0055).

``<operation_id>.request.json`` is a request body the server accepted and
``<operation_id>.response.json`` the answer it gave, recorded from a real run of the service by
``tests/api/test_openapi_examples.py`` (``ECP_RECORD_EXAMPLES=1`` writes them again).
The OpenAPI document shows them as the examples of the operation's body and success answer.
"""

import functools
import json
from importlib import resources
from typing import Any

REQUEST = "request"
RESPONSE = "response"


@functools.cache
def _all() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".json"):
            found[entry.name.removesuffix(".json")] = json.loads(entry.read_text("utf-8"))
    return found


def example(operation_id: str, part: str) -> tuple[bool, Any]:
    """Whether ``operation_id`` has a recorded ``part`` (request or response), and the value."""
    examples = _all()
    key = f"{operation_id}.{part}"
    return key in examples, examples.get(key)


def recorded() -> frozenset[str]:
    """The names of every recorded example, ``<operation_id>.<part>``."""
    return frozenset(_all())
