"""Handlers' answers as JSON: the model unstructured once, encoded once by one shared encoder.

``json.dumps`` with options builds a new encoder on every call (Starlette's ``JSONResponse``
does that); the encoder here is built once and writes the same bytes: UTF-8, no spaces, no
``NaN`` (ADR 0064).
"""

import json
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse, Response

from ecp_core.wire import unstructure

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class JsonAnswer(JSONResponse):
    """``application/json``, written as Starlette's ``JSONResponse`` writes it."""

    def render(self, content: Any) -> bytes:  # noqa: ANN401
        """Compact UTF-8 JSON of ``content``."""
        return _ENCODER.encode(content).encode("utf-8")


def answer(value: Any, status: int, headers: Mapping[str, str] | None = None) -> Response:  # noqa: ANN401
    """A handler's answer: 204 without a body, else the model as JSON."""
    if value is None and status == 204:  # noqa: PLR2004
        return Response(status_code=204, headers=headers)
    return JsonAnswer(unstructure(value), status_code=status, headers=headers)
