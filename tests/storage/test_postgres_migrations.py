"""Every migration rolls back and re-applies cleanly on an empty database."""

import pathlib

import psycopg
import pytest

from ecp_postgres import (
    apply_migrations,
    create_database,
    drop_database,
    migration_status,
    rollback_migrations,
)
from ecp_postgres.migrations import AREAS, migrations

pytestmark = pytest.mark.integration


def tables(url):
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND (table_name LIKE 'ecp_%' OR table_name LIKE 'provider_%')"
        ).fetchall()
    return {row[0] for row in rows}


def indexes(url):
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'ecp_%'"
        ).fetchall()
    return {row[0] for row in rows}


def columns(url, table):
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,)
        ).fetchall()
    return {row[0] for row in rows}


def task_triggers(url):
    """The triggers on ecp_tasks (the offer notifications of ADR 0071)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'ecp_tasks'::regclass AND NOT tgisinternal"
        ).fetchall()
    return {row[0] for row in rows}


def run_notify_source(url):
    """The body of the trigger function that sends the run notifications (ADR 0063, 0071)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'ecp_runs_notify'"
        ).fetchone()
    return None if row is None else row[0]


@pytest.mark.spec("§9 migrations")
def test_each_migration_rolls_back_and_reapplies(postgres_url):
    url = create_database(postgres_url, "ecp_test_migrations")
    try:
        every = [m.id for m in migrations()]
        assert {pathlib.Path(m.path).parent.name for m in migrations()} == set(AREAS)
        assert apply_migrations(url) == every
        assert "NEW.tenant_id" in run_notify_source(url)
        # Issue 34: approval rules (ADR 0075) add columns to the approvals and the runs.
        assert {"min_approvals", "approvals", "run_started_by"} <= columns(url, "ecp_approvals")
        assert "started_by" in columns(url, "ecp_runs")
        complete = tables(url)
        assert {"ecp_runs", "ecp_audit_records", "ecp_audit_heads", "ecp_approvals"} <= complete
        assert {"ecp_retention_policies", "ecp_legal_holds", "ecp_retention_audit_log"} <= complete
        assert {"ecp_runs_expired", "ecp_audit_aged"} <= indexes(url)
        assert all(applied for _, applied in migration_status(url))
        assert {
            "ecp_webhook_subscriptions",
            "ecp_webhook_deliveries",
            "ecp_webhook_attempts",
        } <= complete
        assert {"ecp_webhook_deliveries_due", "ecp_webhook_deliveries_dead"} <= indexes(url)
        evidence = {
            "ecp_evidence_executions",
            "ecp_evidence_outcomes",
            "ecp_evidence_revisions",
            "ecp_evidence_inventories",
            "ecp_evidence_definitions",
        }
        evidence_indexes = {
            "ecp_evidence_executions_charge",
            "ecp_evidence_executions_window",
            "ecp_evidence_executions_run",
            "ecp_evidence_executions_join_key",
            "ecp_evidence_outcomes_deciding",
            "ecp_evidence_revisions_latest",
        }
        assert evidence <= complete
        assert evidence_indexes <= indexes(url)
        decisions = {"ecp_decisions", "ecp_decision_schedules"}
        bills = {"provider_bills", "provider_cost_buckets"}
        assert decisions | bills <= complete
        # Issue 20: the governance areas are the newest; each rolls back alone, newest first.
        governance = [
            ("rollouts_0001_rollouts", {"ecp_rollouts", "ecp_rollout_assignments"}),
            ("transparency_0002_heads_by_time", set()),
            (
                "transparency_0001_log",
                {"ecp_log_pending", "ecp_log_leaves", "ecp_log_tiles", "ecp_log_heads"},
            ),
            ("connectors_0002_abandoned_reservations", set()),
            (
                "connectors_0001_connectors",
                {
                    "ecp_connectors",
                    "ecp_connector_cost_scopes",
                    "ecp_connector_tests",
                    "ecp_connector_costs",
                },
            ),
            (
                "certification_0001_certifications",
                {"ecp_certifications", "ecp_certification_events"},
            ),
            ("templates_0001_templates", {"ecp_templates"}),
            ("attestations_0002_webhook_delivery_health", set()),
            ("attestations_0001_attestations", {"ecp_attestations"}),
        ]
        assert {
            "ecp_webhook_deliveries_pending_by_tenant",
            "ecp_runs_children",
            "ecp_connector_tests_reserved",
        } <= indexes(url)
        assert {"ecp_audit_salts", "ecp_audit_settings"} <= complete
        for migration, dropped in governance:
            before = tables(url)
            assert rollback_migrations(url, 1) == [migration]
            assert before - tables(url) == dropped
        assert "ecp_webhook_deliveries_pending_by_tenant" not in indexes(url)
        every = every[: -len(governance)]
        complete -= {table for _, dropped in governance for table in dropped}
        # Issue 19: backtests come next; their two tables roll back together.
        backtests = {"ecp_backtests", "ecp_backtest_inputs"}
        assert backtests <= complete
        assert rollback_migrations(url, 1) == ["backtests_0001_backtests"]
        assert complete - tables(url) == backtests
        every, complete = every[:-1], complete - backtests
        # Issue 18: the hosted areas come next; each rolls back alone, newest first:
        # identity bindings, meters, merchant events, subscriptions.
        hosted = ["ecp_identity_bindings", "ecp_meters", "ecp_merchant_events", "ecp_subscriptions"]
        assert set(hosted) <= complete
        for undone in range(1, len(hosted) + 1):
            assert rollback_migrations(url, 1) == [every[-undone]]
            assert complete - tables(url) == set(hosted[:undone])
        every, complete = every[: -len(hosted)], complete - set(hosted)
        # Issue 34: the withdrawn task status (ADR 0074) is the queue's newest step.
        assert rollback_migrations(url, 1) == ["tasks_0005_withdrawn_tasks"]
        # Issue 17: the external task queue comes next; undo its offer notifications (ADR 0071),
        # its claim-by-age index (ADR 0068), its lock-expiry and per-run indexes before its table.
        assert task_triggers(url) == {"ecp_tasks_notify_offered", "ecp_tasks_notify_waiting_again"}
        assert rollback_migrations(url, 1) == ["tasks_0004_offer_notifications"]
        assert task_triggers(url) == set()
        assert "ecp_tasks_open_by_age" in indexes(url)
        assert rollback_migrations(url, 1) == ["tasks_0003_claim_by_age"]
        assert "ecp_tasks_open_by_age" not in indexes(url)
        task_indexes = {"ecp_tasks_lock_expiry", "ecp_tasks_by_run"}
        assert {"ecp_tasks_open", "ecp_tasks_by_tenant"} | task_indexes <= indexes(url)
        assert rollback_migrations(url, 1) == ["tasks_0002_lock_expiry"]
        assert not task_indexes & indexes(url)
        assert complete == tables(url)
        assert rollback_migrations(url, 1) == ["tasks_0001_tasks"]
        assert complete - tables(url) == {"ecp_tasks"}
        every, complete = every[:-5], complete - {"ecp_tasks"}
        # Issue 37: decision schedules that watch a rollout (ADR 0095) are the newest econ step.
        assert "rollout_id" in columns(url, "ecp_decision_schedules")
        assert rollback_migrations(url, 1) == ["20261206_15_decision_schedule_rollout"]
        assert "rollout_id" not in columns(url, "ecp_decision_schedules")
        every = every[:-1]
        assert every[-9:] == [
            "retention_0001_policies_holds_log",
            "retention_0002_aged_salted_records",
            "retention_0003_canceled_runs_expire",
            "webhooks_0001_subscriptions_deliveries",
            "webhooks_0002_secret_rotation",
            "webhooks_0003_delivery_notifications",
            "20260830_12_evidence",
            "20260830_13_provider_bills",
            "20260830_14_decisions",
        ]
        assert rollback_migrations(url, 1) == [every[-1]]
        assert complete - tables(url) == decisions
        # Versioning 7: downgrading to 20260830_12 drops the two bill tables and keeps the
        # events, outcomes and outcome definitions.
        assert rollback_migrations(url, 1) == [every[-2]]
        assert complete - tables(url) == decisions | bills
        assert "ecp_evidence_executions_provider" not in indexes(url)
        assert evidence <= tables(url)
        assert rollback_migrations(url, 1) == [every[-3]]
        assert complete - tables(url) == decisions | bills | evidence
        assert not evidence_indexes & indexes(url)
        # Issue 22: the deliveries' wake-up trigger goes first, the tables stay.
        assert rollback_migrations(url, 1) == ["webhooks_0003_delivery_notifications"]
        assert complete - tables(url) == decisions | bills | evidence
        # Issue 21: the secret-rotation columns and their index go before the webhook tables.
        assert "ecp_webhook_subscriptions_previous_secret_expiry" in indexes(url)
        assert rollback_migrations(url, 1) == ["webhooks_0002_secret_rotation"]
        assert complete - tables(url) == decisions | bills | evidence
        assert "ecp_webhook_subscriptions_previous_secret_expiry" not in indexes(url)
        assert rollback_migrations(url, 1) == [every[-6]]
        assert complete - tables(url) == decisions | bills | evidence | {
            "ecp_webhook_subscriptions",
            "ecp_webhook_deliveries",
            "ecp_webhook_attempts",
        }
        assert not {"ecp_webhook_deliveries_due", "ecp_webhook_deliveries_dead"} & indexes(url)
        # Issue 34: the run TTL's index is rebuilt with canceled runs; undone, it is back.
        assert rollback_migrations(url, 1) == ["retention_0003_canceled_runs_expire"]
        assert "ecp_runs_expired" in indexes(url)
        # Issue 20: the aged-records index is rebuilt for versions 2 and 3; undone, it is back
        # to version 2 alone and the tables stay.
        assert rollback_migrations(url, 1) == ["retention_0002_aged_salted_records"]
        assert "ecp_audit_aged" in indexes(url)
        assert rollback_migrations(url, 1) == [every[-9]]
        assert complete - tables(url) == decisions | bills | evidence | {
            "ecp_webhook_subscriptions",
            "ecp_webhook_deliveries",
            "ecp_webhook_attempts",
            "ecp_retention_policies",
            "ecp_legal_holds",
            "ecp_retention_audit_log",
        }
        assert not {"ecp_runs_expired", "ecp_audit_aged"} & indexes(url)
        for undone in range(10, len(every) + 1):
            assert rollback_migrations(url, 1) == [every[-undone]]
            if every[-undone] == "approvals_0003_approval_rules":  # the rules' columns go
                assert not {"min_approvals", "approvals"} & columns(url, "ecp_approvals")
            if every[-undone] == "core_0012_run_timers":  # the due time and its index go
                assert "wait_until" not in columns(url, "ecp_runs")
                assert "ecp_runs_timers_due" not in indexes(url)
            if every[-undone] == "core_0009_run_started_by":
                assert "started_by" not in columns(url, "ecp_runs")
            if every[-undone] == "core_0008_tenant_in_moved_notifications":  # the old payload
                assert "NEW.tenant_id" not in run_notify_source(url)
                assert "NEW.run_id" in run_notify_source(url)
        assert tables(url) == set()
        assert not any(applied for _, applied in migration_status(url))
        assert apply_migrations(url) == [
            *every,
            "20261206_15_decision_schedule_rollout",
            "tasks_0001_tasks",
            "tasks_0002_lock_expiry",
            "tasks_0003_claim_by_age",
            "tasks_0004_offer_notifications",
            "tasks_0005_withdrawn_tasks",
            "billing_0001_subscriptions",
            "billing_0002_merchant_events",
            "entitlements_0001_meters",
            "accounts_0001_identity_bindings",
            "backtests_0001_backtests",
            *(migration for migration, _ in reversed(governance)),
        ]
        assert tables(url) == complete | {"ecp_tasks", *hosted, *backtests} | {
            table for _, dropped in governance for table in dropped
        }
        assert "NEW.tenant_id" in run_notify_source(url)
        assert len(task_triggers(url)) == 2
        assert apply_migrations(url) == []
    finally:
        drop_database(postgres_url, "ecp_test_migrations")
