"""What every Markdown rendering of the core shares."""


def table_cell(text: str) -> str:
    """``text`` safe inside one Markdown table cell: pipes and backslashes escaped, one line."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
