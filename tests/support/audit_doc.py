"""What docs/audit-format.md says, read back from its text for the tests that hold it to the code."""

import re
from pathlib import Path
from typing import Any

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


def reference_verifier(text: str | None = None) -> dict[str, Any]:
    """The reference verifier exactly as the document prints it, run: its names by name.

    Tests that check real exports with it hold the document itself, not a copy, to the code.
    """
    text = DOC.read_text(encoding="utf-8") if text is None else text
    body = section("Reference verifier", text)
    start = body.index("```python\n") + len("```python\n")
    code = body[start : body.index("```", start)]
    namespace: dict[str, Any] = {"__name__": "audit_format_reference_verifier"}
    exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - the documented code, on purpose
    return namespace
