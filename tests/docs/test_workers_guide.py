"""docs/workers.md, run verbatim: its ``sh`` blocks in one bash session against a live server.

The session runs in a fresh directory holding a link to the venv (as from a checkout), so the
guide's ``.venv/bin/ecp worker`` is this venv's. Only the variables the guide declares for the
server (its URL and the admin token) get this server's values; every other line runs as written.
The blocks check their own answers (``curl --fail-with-body``, ``jq -e``); the last one's output
must be the one the guide shows.
"""

import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from tests.docs.test_quickstart import END, declared, sh_blocks, with_values

pytestmark = pytest.mark.e2e

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "workers.md"
VENV = pathlib.Path(sys.executable).parent.parent


@pytest.mark.spec("C10 external-tasks")
def test_the_workers_guide_runs_as_written(ecp_server, tenant, tmp_path):
    bash, curl, jq = shutil.which("bash"), shutil.which("curl"), shutil.which("jq")
    assert bash and curl and jq, "the guide needs bash, curl and jq on PATH"
    text = GUIDE.read_text(encoding="utf-8")
    blocks = sh_blocks(text)
    assert declared(blocks) == ["ECP_URL", "ECP_TOKEN", "ECP_API_KEY"]
    values = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "admin")}
    script = "set -euo pipefail\n" + "".join(
        f"{with_values(block, values)}\nprintf '\\n%s\\n' '{END}'\n" for block in blocks
    )
    (tmp_path / ".venv").symlink_to(VENV)
    # No proxy variables and no ECP_ settings but the guide's: curl talks to loopback directly.
    env = {"PATH": ":".join(str(pathlib.Path(tool).parent) for tool in (bash, curl, jq))}
    done = subprocess.run(
        [bash, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = [out.strip() for out in done.stdout.split(END)][: len(blocks)]
    assert len(outputs) == len(blocks)
    assert '"event": "task completed"' in done.stderr  # the worker's log line
    shown = re.findall(r"^```json\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    assert json.loads(outputs[-1]) == json.loads(shown[-1])
