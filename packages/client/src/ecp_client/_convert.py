"""JSON in and out: the one cattrs converter of the models, and the encoder of request bodies."""

import json
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

import cattrs

T = TypeVar("T")

converter = cattrs.Converter(forbid_extra_keys=False)
"""Structures answers into :mod:`ecp_client.models`; keys a newer server adds are ignored."""


def _datetime(value: object, _: object) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not an RFC 3339 time")
    return datetime.fromisoformat(value)


def _decimal(value: object, _: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | str | Decimal):
        raise TypeError(f"{value!r} is not a number")
    return Decimal(value)


def _passthrough(value: object, _: object) -> object:
    return value


converter.register_structure_hook(datetime, _datetime)
converter.register_structure_hook(Decimal, _decimal)
converter.register_structure_hook(str | int, _passthrough)
converter.register_unstructure_hook(datetime, datetime.isoformat)
converter.register_unstructure_hook(Decimal, str)


def structure(data: object, kind: type[T]) -> T:
    """``data`` (decoded JSON) as ``kind``."""
    return converter.structure(data, kind)


def loads(content: bytes) -> Any:  # noqa: ANN401 - decoded JSON is any JSON value
    """JSON text decoded, its non-integer numbers as ``Decimal`` (nothing rounded)."""
    return json.loads(content, parse_float=Decimal)


def _default(value: object) -> object:
    """Decimals (money) and aware datetimes as strings; attrs models as their JSON form."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.isoformat()
    if hasattr(type(value), "__attrs_attrs__"):
        return converter.unstructure(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(value: object) -> bytes:
    """``value`` as JSON text (UTF-8)."""
    return json.dumps(value, default=_default, ensure_ascii=False).encode("utf-8")
