"""The constraints of ``ecp_core.constraints`` as JSON Schema keywords.

A ``Text`` pattern, which the converter applies with ``re.fullmatch``, is anchored as
``^(?:pattern)$``; ``trimmed`` and ``no_whitespace`` become patterns over exactly the characters
``str.isspace`` accepts. ``AwareUtc`` adds nothing: a ``date-time`` carries its offset.
"""

import sys
from collections.abc import Iterable
from typing import Any

from ecp_core.constraints import Constraint, Items, Range, Text


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


def with_constraints(schema: dict[str, Any], constraints: Iterable[Constraint]) -> dict[str, Any]:
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
        elif hasattr(constraint, "schema_keywords"):  # a constraint that states its own schema
            result.update(constraint.schema_keywords())
    if patterns:
        result["pattern"] = patterns[0]
        if patterns[1:]:
            result["allOf"] = [*result.get("allOf", []), *({"pattern": p} for p in patterns[1:])]
    return result
