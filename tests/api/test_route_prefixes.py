"""Versioning 1: which routes carry the /v1 prefix and which walkthrough routes do not."""

import pytest

from ecp_http.server.handlers import all_operations

pytestmark = pytest.mark.unit

PREFIXED_AREAS = (
    "/v1/evidence/",
    "/v1/debugger/",
    "/v1/decisions",
    "/v1/decision-schedules",
    "/v1/backtests",
    "/v1/retention/",
    "/v1/reconciliation/",
    "/v1/cloud/",
)
"""The economic, retention, reconciliation and cloud routes, by the start of their paths."""

WALKTHROUGH = {
    ("POST", "/runs"),
    ("GET", "/runs/{run_id}"),
    ("GET", "/runs/{run_id}/timeline"),
    ("GET", "/deployments/{ref}/audits"),
    ("POST", "/deployments/{ref}/approvals/{approval_id}/resolve"),
}
"""The run, approval and audit routes of the specification's walkthrough, unprefixed."""

ECONOMIC_WORDS = ("evidence", "debugger", "decision", "backtest", "retention", "reconciliation")


@pytest.mark.spec("§9 route-prefixes")
def test_economic_retention_reconciliation_and_cloud_routes_carry_v1():
    operations = all_operations(billing_enabled=True, identity_enabled=True)
    paths = {(op.method, op.path) for op in operations}
    for area in PREFIXED_AREAS:
        assert any(path.startswith(area) for _, path in paths), area
    for _, path in paths:  # no economic, retention or cloud route without the prefix
        first = path.strip("/").split("/")[0]
        if any(word in first for word in ECONOMIC_WORDS) or first == "cloud":
            pytest.fail(f"{path} lacks /v1")


@pytest.mark.spec("§9 route-prefixes")
def test_the_walkthroughs_run_approval_and_audit_routes_have_no_prefix():
    paths = {(op.method, op.path) for op in all_operations()}
    assert paths >= WALKTHROUGH
    assert not {(method, "/v1" + path) for method, path in WALKTHROUGH} & paths
