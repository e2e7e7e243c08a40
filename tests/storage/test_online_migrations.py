"""Every migration keeps the online rule: no exclusive lock on a table that grows with use.

The migrations released before the rule are listed with the steps that break it (their tables
were small or new when they ran; an upgrade from before them stops writers, docs/production.md);
any further step breaking it, in them or in a new migration, fails here.
"""

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_postgres.migrations import AREAS
from ecp_postgres.migrations.online import GROWING, statements, violations

pytestmark = pytest.mark.unit

MIGRATIONS = (
    pathlib.Path(__file__).parents[2] / "packages/adapters_postgres/src/ecp_postgres/migrations"
)
INDEX = "CREATE INDEX without CONCURRENTLY blocks writes while it builds"
BEFORE_THE_RULE = {
    "approvals_0002_inbox": [f"ecp_approvals: {INDEX}"] * 3,
    "attestations_0002_webhook_delivery_health": [f"ecp_webhook_deliveries: {INDEX}"] * 3,
    "audit_0002_salts": [
        "ecp_audit_records: a constraint added without NOT VALID scans under a lock"
    ],
    "audit_0003_deployment_order": [f"ecp_audit_records: {INDEX}"],
    "connectors_0002_abandoned_reservations": [
        "ecp_connector_tests: rows rewritten in the migration (backfill in batches outside it)",
        "ecp_connector_tests: SET NOT NULL scans the table under an exclusive lock",
        f"ecp_connector_tests: {INDEX}",
    ],
    "core_0002_run_dispatch": [
        "ecp_runs: a column whose default is computed per row rewrites the table",
        f"ecp_runs: {INDEX}",
        f"ecp_runs: {INDEX}",
    ],
    "core_0004_child_runs": [f"ecp_runs: {INDEX}"],
    "core_0010_pausing": [f"ecp_runs: {INDEX}"] * 2,
    "core_0011_run_priority": [f"ecp_runs: {INDEX}"],
    "core_0012_run_timers": [f"ecp_runs: {INDEX}"],
    "core_0013_concurrency_limits": [f"ecp_runs: {INDEX}"],
    "20260830_13_provider_bills": [f"ecp_evidence_executions: {INDEX}"],
    "retention_0001_policies_holds_log": [f"ecp_runs: {INDEX}", f"ecp_audit_records: {INDEX}"],
    "retention_0002_aged_salted_records": [f"ecp_audit_records: {INDEX}"],
    "retention_0003_canceled_runs_expire": [f"ecp_runs: {INDEX}"],
    "tasks_0002_lock_expiry": [f"ecp_tasks: {INDEX}"] * 2,
    "tasks_0003_claim_by_age": [f"ecp_tasks: {INDEX}"],
}
"""Migrations released before the rule, and the steps of each that break it."""


def found(text: str) -> list[str]:
    return violations(text, transactional="-- transactional: false" not in text)


def every_migration() -> list[pathlib.Path]:
    return sorted(
        path
        for area in AREAS
        for path in (MIGRATIONS / area).glob("*.sql")
        if not path.name.endswith(".rollback.sql")
    )


@pytest.mark.spec("C19 online-migrations")
@pytest.mark.parametrize("path", every_migration(), ids=lambda path: path.stem)
def test_every_migration_keeps_the_online_rule(path):
    text = path.read_text(encoding="utf-8")
    assert found(text) == BEFORE_THE_RULE.get(path.stem, [])


def test_every_listed_migration_exists():
    assert set(BEFORE_THE_RULE) <= {path.stem for path in every_migration()}


BAD = {
    "index": "CREATE INDEX ecp_runs_by_x ON ecp_runs (tenant_id, x);",
    "unique index": "CREATE UNIQUE INDEX IF NOT EXISTS t ON ecp_tasks USING btree (a);",
    "concurrent in a transaction": "CREATE INDEX CONCURRENTLY i ON ecp_runs (a);",
    "not null column": "ALTER TABLE ecp_runs ADD COLUMN x text NOT NULL;",
    "computed default": "ALTER TABLE ecp_audit_records ADD COLUMN x uuid DEFAULT gen_random_uuid();",
    "check": "ALTER TABLE ecp_tasks ADD CONSTRAINT c CHECK (attempts >= 0);",
    "foreign key": "ALTER TABLE ecp_approvals ADD CONSTRAINT f FOREIGN KEY (r) REFERENCES ecp_runs;",
    "type change": "ALTER TABLE ecp_runs ALTER COLUMN priority TYPE bigint;",
    "set not null": "ALTER TABLE ecp_runs ALTER COLUMN priority SET NOT NULL;",
    "backfill": "UPDATE ecp_runs SET priority = 0 WHERE priority IS NULL;",
    "delete": "DELETE FROM ecp_log_pending;",
    "lock": "LOCK TABLE ecp_webhook_deliveries IN ACCESS EXCLUSIVE MODE;",
    "vacuum full": "VACUUM FULL ecp_audit_records;",
    "reindex": "REINDEX TABLE ecp_tasks;",
}

GOOD = {
    "concurrent index": "-- transactional: false\nCREATE INDEX CONCURRENTLY i ON ecp_runs (a);",
    "nullable column": "ALTER TABLE ecp_runs ADD COLUMN rollout_id text;",
    "constant default": "ALTER TABLE ecp_runs ADD COLUMN arm integer NOT NULL DEFAULT 0;",
    "not valid check": "ALTER TABLE ecp_tasks ADD CONSTRAINT c CHECK (a >= 0) NOT VALID;",
    "validate": "ALTER TABLE ecp_tasks VALIDATE CONSTRAINT c;",
    "a small table": "CREATE INDEX i ON ecp_deployments (tenant_id); UPDATE ecp_policies SET a = 1;",
    "a new table": "CREATE TABLE ecp_things (a text);\nCREATE INDEX i ON ecp_things (a);",
    "a function body": "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN UPDATE ecp_runs"
    " SET a = 1; RETURN NULL; END $$ LANGUAGE plpgsql;",
    "a comment": "-- UPDATE ecp_runs SET a = 1;\nSELECT 1;",
}


@pytest.mark.spec("C19 online-migrations")
@pytest.mark.parametrize("sql", list(BAD.values()), ids=list(BAD))
def test_a_bad_migration_is_refused(sql):
    assert found(sql), sql


@pytest.mark.spec("C19 online-migrations")
@pytest.mark.parametrize("sql", list(GOOD.values()), ids=list(GOOD))
def test_an_online_migration_passes(sql):
    assert found(sql) == []


@pytest.mark.spec("C19 online-migrations")
@given(
    table=st.sampled_from(sorted(GROWING)),
    created_here=st.booleans(),
    concurrent=st.booleans(),
    padding=st.sampled_from([" ", "\n", "  \n\t"]),
)
def test_an_index_on_a_growing_table_is_online_only_when_built_concurrently_or_new(
    table, created_here, concurrent, padding
):
    header = "-- transactional: false\n" if concurrent else ""
    create = f"CREATE TABLE {table} (a text);{padding}" if created_here else ""
    build = "CONCURRENTLY " if concurrent else ""
    sql = f"{header}{create}CREATE INDEX{padding}{build}i ON {table}{padding}(a);"
    assert (found(sql) == []) == (concurrent or created_here)
    assert len(list(statements(sql))) == 1 + created_here
