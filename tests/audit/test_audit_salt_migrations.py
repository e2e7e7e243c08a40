"""The salted-commitment migrations (ADR 0047): tables, the TTL index, and a refused rollback.

``audit_0002_salts`` adds the salt and settings tables and allows digest_version 3;
``retention_0002_aged_salted_records`` widens the audit TTL sweep's partial index to versions 2
and 3. The whole chain's apply and roll back is tests/storage/test_postgres_migrations.py.
"""

import os
from pathlib import Path

import psycopg
import pytest

from ecp_core.testing.strategies.audit import build_chain
from ecp_postgres import PostgresStore, apply_migrations, create_database, drop_database
from ecp_postgres.audit import ERASABLE_VERSIONS_SQL
from ecp_postgres.migrations import migrations

pytestmark = [pytest.mark.integration, pytest.mark.spec("§9 migrations")]

ROLLBACK = Path(next(m.path for m in migrations() if m.id == "audit_0002_salts")).with_suffix(
    ".rollback.sql"
)


@pytest.fixture
def database(postgres_url):
    name = f"ecp_test_salts_{os.getpid()}"
    url = create_database(postgres_url, name)
    yield url
    drop_database(postgres_url, name)


def test_the_tables_and_the_aged_index_are_there_and_the_sweep_uses_the_index(database):
    applied = apply_migrations(database)
    assert applied.index("audit_0001_records_and_heads") < applied.index("audit_0002_salts")
    assert applied.index("audit_0002_salts") < applied.index("retention_0002_aged_salted_records")
    with psycopg.connect(database) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        assert {"ecp_audit_salts", "ecp_audit_settings"} <= tables
        (definition,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ecp_audit_aged'"
        ).fetchone()
        assert "ANY (ARRAY[2, 3])" in definition
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT audit_id FROM ecp_audit_records WHERE tenant_id = 't1'"  # noqa: S608
            f" AND digest_version IN ({ERASABLE_VERSIONS_SQL}) AND NOT erased"
            " AND created_at < now() ORDER BY created_at LIMIT 5"
        ).fetchall()
        assert "ecp_audit_aged" in " ".join(row[0] for row in plan)


@pytest.mark.spec("§9 salted-commitments")
def test_rolling_back_the_salts_is_refused_while_a_version_3_record_exists(database):
    apply_migrations(database)
    records, _ = build_chain([{"stdout": "yes"}], digest_version=3)
    with PostgresStore(database, max_size=2) as store, store.unit_of_work() as tx:
        tx.audit.append(records[0])
        tx.commit()
    undo = ROLLBACK.read_text(encoding="utf-8")
    with psycopg.connect(database) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(undo)
        conn.rollback()
        assert conn.execute("SELECT count(*) FROM ecp_audit_salts").fetchone() == (1,)
        conn.execute("DELETE FROM ecp_audit_records")  # its salt goes with it (cascade)
        assert conn.execute("SELECT count(*) FROM ecp_audit_salts").fetchone() == (0,)
        conn.execute(undo)  # without version 3 records the rollback goes through
        conn.rollback()
