"""docs/quickstart.md, run verbatim: its ``sh`` blocks in one bash session with a real ``curl``.

Only the variables the guide declares in its ``export`` lines (the base URL and the tokens) are
given this server's values; every other line runs as written, and each block's answer is checked.
"""

import json
import pathlib

import pytest
from tests.support.guides import declared, run_blocks, sh_blocks

pytestmark = pytest.mark.e2e

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "quickstart.md"
DECLARED = ("ECP_URL", "ECP_TOKEN", "ECP_APPROVER_TOKEN")


@pytest.mark.spec("C10 approver-inbox")
def test_the_quickstart_runs_as_written(ecp_server, tenant):
    blocks = sh_blocks(GUIDE.read_text(encoding="utf-8"))
    assert declared(blocks) == list(DECLARED)
    values = {
        "ECP_URL": ecp_server.base_url,
        "ECP_TOKEN": ecp_server.token(tenant, "admin"),
        "ECP_APPROVER_TOKEN": ecp_server.token(tenant, "approver"),
    }
    outputs, _ = run_blocks(blocks, values)
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
