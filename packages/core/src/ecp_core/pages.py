"""Paging: page sizes, the opaque cursors every growing list hands out, and the order of ids.

Ids (and every other identifier a list is ordered or bounded by) compare by Unicode code point:
the order of Python's ``str`` and of PostgreSQL's ``COLLATE "C"``, never a locale's. Every storage
adapter orders and bounds pages this way; the conformance kit checks it
(``RunRepositoryConformance.test_ids_order_by_code_point``).
"""

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from ecp_core.errors import FieldError, ValidationFailed

DEFAULT_PAGE = 50
MAX_PAGE = 500

T = TypeVar("T")


def check_limit(limit: int) -> None:
    """ValidationFailed unless ``limit`` is a page size this service hands out (1 to MAX_PAGE)."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationFailed(
            "invalid limit", errors=[FieldError(loc=("limit",), msg=f"must be 1 to {MAX_PAGE}")]
        )


def invalid_cursor() -> ValidationFailed:
    """The error for a cursor this service did not issue (or issued for another list)."""
    return ValidationFailed(
        "invalid cursor",
        errors=[FieldError(loc=("cursor",), msg="not a cursor this service issued")],
    )


def encode_cursor(kind: str, *parts: str) -> str:
    """An opaque cursor of list ``kind`` pointing after the position ``parts``."""
    raw = json.dumps([kind, *parts], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(kind: str, cursor: str, count: int) -> tuple[str, ...]:
    """The ``count`` position parts of a cursor of list ``kind``; ValidationFailed otherwise."""
    invalid = invalid_cursor()
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
        decoded = json.loads(raw)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise invalid from exc
    valid = (
        isinstance(decoded, list)
        and len(decoded) == count + 1
        and decoded[0] == kind
        and all(isinstance(part, str) and part for part in decoded[1:])
    )
    if not valid:
        raise invalid
    return tuple(decoded[1:])


def next_page(
    found: Sequence[T], limit: int, kind: str, position: Callable[[T], Sequence[str]]
) -> tuple[list[T], str | None]:
    """A page from ``found`` (read with one row more than ``limit``) and the cursor after it.

    The cursor, of list ``kind``, points after the page's last item at ``position(item)``; None
    when ``found`` held no more than ``limit`` (the last page).
    """
    page = list(found[:limit])
    if len(found) <= limit:
        return page, None
    return page, encode_cursor(kind, *position(page[-1]))
