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
import sys

import pytest
from tests.support.guides import declared, run_blocks, sh_blocks

pytestmark = pytest.mark.e2e

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "workers.md"
VENV = pathlib.Path(sys.executable).parent.parent


@pytest.mark.spec("C10 external-tasks")
def test_the_workers_guide_runs_as_written(ecp_server, tenant, tmp_path):
    text = GUIDE.read_text(encoding="utf-8")
    blocks = sh_blocks(text)
    assert declared(blocks) == ["ECP_URL", "ECP_TOKEN", "ECP_API_KEY"]
    values = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "admin")}
    (tmp_path / ".venv").symlink_to(VENV)
    outputs, stderr = run_blocks(blocks, values, cwd=tmp_path, timeout=180)
    assert '"event": "task completed"' in stderr  # the worker's log line
    shown = re.findall(r"^```json\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    assert json.loads(outputs[-1]) == json.loads(shown[-1])
