"""The settings tables of docs/operations.md and docs/hosted.md, rendered from the one table.

Each document holds its table as rendered here; a test fails when they differ (ADR 0072).
``python -m ecp_http.openapi.settings_doc operations`` (or ``hosted``) prints one.
"""

import sys
from collections.abc import Sequence

from ecp_core.markdown import table_cell
from ecp_http.config.table import SETTINGS
from ecp_http.config.values import Setting

_HEADERS = {
    "operations": ("| setting | default | meaning |", "|---|---|---|"),
    "hosted": ("| Setting | Needed when | What |", "|---|---|---|"),
}
"""The documents with a settings table, and the head of each."""


def settings_table(document: str) -> str:
    """The markdown table of the settings ``document`` lists, in the table's order."""
    lines = list(_HEADERS[document])
    for setting in SETTINGS:
        if setting.document != document:
            continue
        if document == "hosted":
            middle = (setting.needed_by if isinstance(setting, Setting) else None) or ""
        else:
            middle = setting.shown_default
        cells = (f"`{setting.name}`", middle, table_cell(setting.description))
        lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of the document named (``operations`` or ``hosted``)."""
    names = list(sys.argv[1:] if argv is None else argv)
    if len(names) != 1 or names[0] not in _HEADERS:
        sys.stderr.write(f"usage: settings_doc {{{'|'.join(_HEADERS)}}}\n")
        return 2
    sys.stdout.write(settings_table(names[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
