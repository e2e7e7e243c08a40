"""docs/run-control.md, run verbatim: its ``sh`` blocks in one bash session with a real ``curl``.

Only the variables the guide declares in its ``export`` lines get this server's values; every
other line runs as written. Each block's answer must be the JSON the guide shows after it.
"""

import pathlib
from typing import Any

import pytest
from tests.support.guides import declared, json_values, run_blocks, sh_blocks

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.spec(
        "C14 cancel",
        "C14 cancel-cascade",
        "C14 four-eyes",
        "C14 approvers",
        "C14 limits",
        "C14 timer",
        "C17 migrate",
        "C17 migrate-refused",
    ),
]

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "run-control.md"
DECLARED = ("ECP_URL", "ECP_TOKEN", "ECP_OPERATOR_TOKEN", "ECP_ANN_TOKEN", "ECP_BEN_TOKEN")


def expected_answers(markdown: str) -> list[list[Any]]:
    """For each ``sh`` block, the JSON values of the ``json`` block right after it (or none)."""
    answers: list[list[Any]] = []
    lines = markdown.splitlines()
    for index, line in enumerate(lines):
        if line.strip() != "```sh":
            continue
        end = lines.index("```", index + 1)
        after = next((n for n in range(end + 1, len(lines)) if lines[n].strip()), None)
        if after is not None and lines[after].strip() == "```json":
            close = lines.index("```", after + 1)
            answers.append(json_values("\n".join(lines[after + 1 : close])))
        else:
            answers.append([])
    return answers


def test_the_run_control_guide_runs_as_written(ecp_server, tenant):
    markdown = GUIDE.read_text(encoding="utf-8")
    blocks = sh_blocks(markdown)
    assert declared(blocks) == list(DECLARED)
    values = {
        "ECP_URL": ecp_server.base_url,
        "ECP_TOKEN": ecp_server.token(tenant, "admin"),
        "ECP_OPERATOR_TOKEN": ecp_server.token(tenant, "operator"),
        "ECP_ANN_TOKEN": ecp_server.token(tenant, "approver", subject="ann@example.com"),
        "ECP_BEN_TOKEN": ecp_server.token(tenant, "approver", subject="ben@example.com"),
    }
    outputs, _ = run_blocks(blocks, values)
    assert [json_values(out) for out in outputs] == expected_answers(markdown)
