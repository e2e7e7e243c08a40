"""``ecp deployments limit|pause|unpause``: a deployment's limit (ADR 0079) and pause (ADR 0076)."""

import pytest
from tests.approvals.test_runs_approvals_cli import answer, ecp
from tests.support.e2e import check, deploy, gated_action_graph

pytestmark = [pytest.mark.e2e, pytest.mark.spec("C14 limits")]

REF = "gated"


def test_a_limit_is_set_shown_and_lifted(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    env = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "operator")}
    limited = answer(ecp("deployments", "limit", REF, "--max", 3, "--format", "json", env=env))
    assert limited["max_concurrent_runs"] == 3
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["max_concurrent_runs"] == 3
    table = ecp("deployments", "limit", REF, "--max", 4, env=env)
    assert table.returncode == 0, table.stderr
    assert "max concurrent runs" in table.stdout
    lifted = answer(ecp("deployments", "limit", REF, "--unlimited", "--format", "json", env=env))
    assert lifted["max_concurrent_runs"] is None
    refused = ecp("deployments", "limit", REF, "--max", 0, env=env)
    assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
    assert refused.stderr.startswith("ecp deployments: HTTP 422 validation_failed: ")
    assert "max_concurrent_runs: must be at least 1" in refused.stderr  # the field, named
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["max_concurrent_runs"] is None


@pytest.mark.spec("C14 pause")
def test_a_deployment_is_paused_and_unpaused_from_the_command_line(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    env = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "operator")}
    paused = ecp("deployments", "pause", REF, "--reason", "incident", "--format", "json", env=env)
    assert answer(paused)["paused"] is True
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["paused"] is True
    table = ecp("deployments", "unpause", REF, env=env)
    assert table.returncode == 0, table.stderr
    assert "paused" in table.stdout
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["paused"] is False
