"""What the API commands print: JSON as the service gave it, an aligned table, or Markdown."""

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

FORMATS = ("table", "markdown", "json")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """The ``--format`` option of a command that prints records."""
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (aligned columns, the default), markdown (a Markdown table) or json "
        "(the service's JSON, for scripts)",
    )


def emit(text: str) -> None:
    """Write ``text`` and a newline to stdout."""
    sys.stdout.write(text + "\n")


def json_text(value: Any) -> str:  # noqa: ANN401 - any JSON value
    """``value`` as indented JSON."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def cell(value: Any) -> str:  # noqa: ANN401 - any JSON value
    """One JSON value as a table cell: text as is, nothing as empty, the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def table(
    records: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], *, markdown: bool
) -> str:
    """``records`` as rows of ``columns`` (heading, field): aligned text or a Markdown table."""
    headings = [heading for heading, _ in columns]
    rows = [[cell(record.get(field)) for _, field in columns] for record in records]
    if markdown:
        escaped = [[text.replace("|", "\\|").replace("\n", " ") for text in row] for row in rows]
        lines = [headings, ["---"] * len(headings), *escaped]
        return "\n".join("| " + " | ".join(line) + " |" for line in lines)
    widths = [max(len(text) for text in column) for column in zip(headings, *rows, strict=True)]
    return "\n".join(
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in (headings, *rows)
    )


def fields(record: Mapping[str, Any], names: Sequence[tuple[str, str]], *, markdown: bool) -> str:
    """One record as ``field  value`` lines (or a two-column Markdown table)."""
    pairs = [{"field": heading, "value": cell(record.get(name))} for heading, name in names]
    if markdown:
        return table(pairs, [("field", "field"), ("value", "value")], markdown=True)
    width = max(len(heading) for heading, _ in names)
    return "\n".join(f"{pair['field']:<{width}}  {pair['value']}".rstrip() for pair in pairs)
