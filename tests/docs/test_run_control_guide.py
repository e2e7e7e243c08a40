"""docs/run-control.md, run verbatim: its ``sh`` blocks in one bash session with a real ``curl``.

Only the variables the guide declares in its ``export`` lines get this server's values; every
other line runs as written. Each block's answer must be the JSON the guide shows after it.
"""

import json
import pathlib
import shutil
import subprocess
from typing import Any

import pytest
from tests.docs.test_quickstart import END, declared, sh_blocks, with_values

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.spec("C14 cancel", "C14 cancel-cascade", "C14 four-eyes", "C14 approvers"),
]

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "run-control.md"
DECLARED = ("ECP_URL", "ECP_TOKEN", "ECP_OPERATOR_TOKEN", "ECP_ANN_TOKEN", "ECP_BEN_TOKEN")


def values_in(text: str) -> list[Any]:
    """The JSON values ``text`` holds one after another (jq prints a stream)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    text = text.strip()
    while at < len(text):
        value, at = decoder.raw_decode(text, at)
        found.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


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
            answers.append(values_in("\n".join(lines[after + 1 : close])))
        else:
            answers.append([])
    return answers


def test_the_run_control_guide_runs_as_written(ecp_server, tenant):
    bash, curl, jq = shutil.which("bash"), shutil.which("curl"), shutil.which("jq")
    assert bash and curl and jq, "the guide needs bash, curl and jq on PATH"
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
    script = "set -euo pipefail\n" + "".join(
        f"{with_values(block, values)}\nprintf '\\n%s\\n' '{END}'\n" for block in blocks
    )
    env = {"PATH": ":".join(str(pathlib.Path(tool).parent) for tool in (bash, curl, jq))}
    done = subprocess.run(
        [bash, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = [out.strip() for out in done.stdout.split(END)][: len(blocks)]
    assert [values_in(out) for out in outputs] == expected_answers(markdown)
