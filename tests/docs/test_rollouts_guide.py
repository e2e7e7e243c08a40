"""docs/rollouts.md, run verbatim: its ``sh`` blocks in one bash session with a real ``curl``.

Only the variables the guide declares in its ``export`` lines get this server's values; every
other line runs as written. Each block's answer must be the JSON the guide shows after it.
"""

import pathlib

import pytest
from tests.docs.test_run_control_guide import expected_answers
from tests.support.guides import declared, json_values, run_blocks, sh_blocks

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.spec(
        "C17 rollout-create",
        "C17 rollout-assign",
        "C17 rollout-verify",
        "C17 rollout-end",
        "C17 rollout-compare",
    ),
]

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "rollouts.md"


def test_the_rollouts_guide_runs_as_written(ecp_server, tenant):
    markdown = GUIDE.read_text(encoding="utf-8")
    blocks = sh_blocks(markdown)
    assert declared(blocks) == ["ECP_URL", "ECP_TOKEN"]
    values = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "admin")}
    outputs, _ = run_blocks(blocks, values, timeout=300)
    assert [json_values(out) for out in outputs] == expected_answers(markdown)
