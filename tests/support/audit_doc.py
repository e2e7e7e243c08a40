"""What docs/audit-format.md says, read back from its text for the tests that hold it to the code."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "audit-format.md"


def section(title: str, text: str | None = None) -> str:
    """The body of the ``## title`` section, up to the next ``##`` heading."""
    text = DOC.read_text(encoding="utf-8") if text is None else text
    start = text.index(f"\n## {title}\n") + len(f"\n## {title}\n")
    end = text.find("\n## ", start)
    return text[start : None if end == -1 else end]


def table_codes(body: str) -> list[str]:
    """The backticked first cells of a Markdown table's rows, in order."""
    return re.findall(r"^\| `([^`]+)` \|", body, flags=re.MULTILINE)


def documented_statuses(text: str | None = None) -> list[str]:
    """The record statuses the document lists, in its order."""
    return table_codes(section("Record statuses", text))
