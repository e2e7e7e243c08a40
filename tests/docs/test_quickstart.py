"""docs/quickstart.md, run verbatim: its ``sh`` blocks in one bash session with a real ``curl``.

Only the variables the guide declares in its ``export`` lines (the base URL and the tokens) are
given this server's values; every other line runs as written, and each block's answer is checked.
"""

import json
import pathlib
import shlex
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.e2e

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "quickstart.md"
END = "@@ end of block @@"
DECLARED = ("ECP_URL", "ECP_TOKEN", "ECP_APPROVER_TOKEN")


def sh_blocks(markdown: str) -> list[str]:
    """The text of every fenced ``sh`` block, in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        if current is None and line.strip() == "```sh":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    assert current is None, "an sh block is not closed"
    return blocks


def with_values(block: str, values: dict[str, str]) -> str:
    """``block`` with the declared variables' ``export`` lines set to ``values``."""
    lines = []
    for line in block.splitlines():
        name = line.removeprefix("export ").partition("=")[0]
        if line.startswith("export ") and name in values:
            lines.append(f"export {name}={shlex.quote(values[name])}")
        else:
            lines.append(line)
    return "\n".join(lines)


def declared(blocks: list[str]) -> list[str]:
    return [
        line.removeprefix("export ").partition("=")[0]
        for block in blocks
        for line in block.splitlines()
        if line.startswith("export ")
    ]


@pytest.mark.spec("C10 approver-inbox")
def test_the_quickstart_runs_as_written(ecp_server, tenant):
    bash, curl, jq = shutil.which("bash"), shutil.which("curl"), shutil.which("jq")
    assert bash and curl and jq, "the quickstart needs bash, curl and jq on PATH"
    blocks = sh_blocks(GUIDE.read_text(encoding="utf-8"))
    assert declared(blocks) == list(DECLARED)
    values = {
        "ECP_URL": ecp_server.base_url,
        "ECP_TOKEN": ecp_server.token(tenant, "admin"),
        "ECP_APPROVER_TOKEN": ecp_server.token(tenant, "approver"),
    }
    script = "set -euo pipefail\n" + "".join(
        f"{with_values(block, values)}\nprintf '\\n%s\\n' '{END}'\n" for block in blocks
    )
    # No proxy variables: curl talks to the loopback server directly.
    env = {"PATH": ":".join(str(pathlib.Path(tool).parent) for tool in (bash, curl, jq))}
    done = subprocess.run(
        [bash, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = [out.strip() for out in done.stdout.split(END)][: len(blocks)]
    answers = [json.loads(out) if out else None for out in outputs]
    exports, graph, deployment, run, inbox, resolved, timeline, verified = answers
    assert exports is None
    assert (graph["graph_id"], graph["version"]) == ("refund-triage", 1)
    assert (deployment["deployment_ref"], deployment["graph_version_ref"]) == (
        "refunds",
        "refund-triage@1",
    )
    assert run["status"] == "waiting_approval"
    [approval] = inbox["approvals"]
    assert approval["run_id"] == run["run_id"]
    assert approval["approval_id"] == run["pending_approval_ids"][0]
    assert inbox["next_cursor"] is None
    assert resolved == {"approval": "resolved", "run": "completed"}
    assert timeline["run_id"] == run["run_id"]
    in_order = list(dict.fromkeys(e["node_id"] for e in timeline["entries"]))
    assert in_order[:3] == ["classify", "review", "notify"]
    assert verified["verified"] is True
    assert verified["signature_verified"] is True
    assert verified["record_count"] == len(timeline["entries"])
