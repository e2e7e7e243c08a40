"""The embedded default server and the ``ecp migrate`` command line."""

import os
import subprocess
import sys

import psycopg
import pytest

from ecp_postgres import EmbeddedPostgres, database_url
from ecp_postgres.migrations import migrations

pytestmark = pytest.mark.integration


@pytest.mark.spec("C2 cli")
def test_the_embedded_server_keeps_data_across_restarts(tmp_path):
    with (
        EmbeddedPostgres(tmp_path) as server,
        psycopg.connect(server.start(), autocommit=True) as conn,
    ):
        conn.execute("CREATE TABLE kept (value text)")
        conn.execute("INSERT INTO kept VALUES ('still here')")
    assert (tmp_path / "pg" / "PG_VERSION").exists()
    with database_url(None, tmp_path) as url, psycopg.connect(url) as conn:
        assert conn.execute("SELECT value FROM kept").fetchone() == ("still here",)


@pytest.mark.spec("C2 cli")
def test_a_configured_url_is_used_as_it_is(tmp_path):
    with database_url("postgresql://example/db", tmp_path) as url:
        assert url == "postgresql://example/db"
    assert not (tmp_path / "pg").exists()


def ecp(*args, url):
    env = {**os.environ, "ECP_DATABASE_URL": url}
    cli = [
        sys.executable,
        "-c",
        "import sys; from ecp_http.cli import main; sys.exit(main())",
        *args,
    ]
    return subprocess.run(
        cli, env=env, capture_output=True, text=True, check=True, timeout=120
    ).stdout


@pytest.mark.spec("C2 cli", "§9 migrations")
def test_migrate_list_apply_rollback(postgres_url):
    from ecp_postgres import create_database, drop_database

    url = create_database(postgres_url, "ecp_test_cli")
    try:
        assert ecp("migrate", "list", url=url).split() == [
            "pending",
            "core_0001_graphs_deployments_runs",
            "pending",
            "core_0002_run_dispatch",
            "pending",
            "core_0003_listing_order",
            "pending",
            "core_0004_child_runs",
            "pending",
            "core_0005_wakeup_notifications",
            "pending",
            "core_0006_batched_write_checks",
            "pending",
            "core_0007_claim_function",
            "pending",
            "core_0008_tenant_in_moved_notifications",
            "pending",
            "core_0009_run_started_by",
            "pending",
            "core_0010_pausing",
            "pending",
            "core_0011_run_priority",
            "pending",
            "core_0012_run_timers",
            "pending",
            "core_0013_concurrency_limits",
            "pending",
            "core_0014_run_rollout_arm",
            "pending",
            "audit_0001_records_and_heads",
            "pending",
            "audit_0002_salts",
            "pending",
            "audit_0003_deployment_order",
            "pending",
            "approvals_0001_approvals_and_actions",
            "pending",
            "approvals_0002_inbox",
            "pending",
            "approvals_0003_approval_rules",
            "pending",
            "identity_0001_api_keys",
            "pending",
            "retention_0001_policies_holds_log",
            "pending",
            "retention_0002_aged_salted_records",
            "pending",
            "retention_0003_canceled_runs_expire",
            "pending",
            "webhooks_0001_subscriptions_deliveries",
            "pending",
            "webhooks_0002_secret_rotation",
            "pending",
            "webhooks_0003_delivery_notifications",
            "pending",
            "20260830_12_evidence",
            "pending",
            "20260830_13_provider_bills",
            "pending",
            "20260830_14_decisions",
            "pending",
            "20261206_15_decision_schedule_rollout",
            "pending",
            "tasks_0001_tasks",
            "pending",
            "tasks_0002_lock_expiry",
            "pending",
            "tasks_0003_claim_by_age",
            "pending",
            "tasks_0004_offer_notifications",
            "pending",
            "tasks_0005_withdrawn_tasks",
            "pending",
            "billing_0001_subscriptions",
            "pending",
            "billing_0002_merchant_events",
            "pending",
            "entitlements_0001_meters",
            "pending",
            "accounts_0001_identity_bindings",
            "pending",
            "backtests_0001_backtests",
            "pending",
            "attestations_0001_attestations",
            "pending",
            "attestations_0002_webhook_delivery_health",
            "pending",
            "templates_0001_templates",
            "pending",
            "certification_0001_certifications",
            "pending",
            "connectors_0001_connectors",
            "pending",
            "connectors_0002_abandoned_reservations",
            "pending",
            "transparency_0001_log",
            "pending",
            "transparency_0002_heads_by_time",
            "pending",
            "rollouts_0001_rollouts",
        ]
        every = len(migrations())
        assert f"applied {every} migration(s)" in ecp("migrate", "apply", url=url)
        assert ecp("migrate", "list", url=url).count("applied") == every
        assert "rollouts_0001_rollouts" in ecp("migrate", "rollback", url=url)
        assert ecp("migrate", "list", url=url).count("pending") == 1
    finally:
        drop_database(postgres_url, "ecp_test_cli")
