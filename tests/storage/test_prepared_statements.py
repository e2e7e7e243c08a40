"""A unit of work that rolls back keeps its connection's prepared statements (ADR 0108).

psycopg prepares a statement once a connection has run it five times, and by itself forgets all
of them at any ``ROLLBACK`` (sending ``DEALLOCATE ALL``). Read units always end in a rollback,
so their statements would never stay prepared. Ours keep them: no ``DEALLOCATE`` is sent, the
server still holds the statement, and the next read uses it.
"""

import pytest
from tests.support.statements import sent_to

from ecp_core.errors import NotFound
from ecp_core.testing.samples import run
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

READS = 8
"""More than psycopg's threshold (5) for preparing a statement."""


def prepared_on(store: PostgresStore) -> list[str]:
    """The statements the server holds prepared for the store's one connection."""
    with store.pool.connection() as conn:
        rows = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
        conn.rollback()
    return [row["statement"] for row in rows]


def test_a_unit_that_rolls_back_keeps_the_prepared_statements(fresh_database):
    with PostgresStore(fresh_database, max_size=1) as store:
        with sent_to(fresh_database) as seen:
            for _ in range(READS):  # each read unit ends in a ROLLBACK
                with store.unit_of_work() as uow:
                    assert uow.runs.get("t1", "nowhere") is None
        assert seen.count("ROLLBACK") == READS, seen
        assert not [sql for sql in seen if sql.startswith("DEALLOCATE")], seen
        assert [sql for sql in prepared_on(store) if "FROM ecp_runs" in sql], prepared_on(store)


def test_a_savepoint_rolled_back_keeps_the_prepared_statements(fresh_database):
    """A work that fails in a shared transaction rolls back to its savepoint only; the prepared
    statements of the connection stay."""
    with PostgresStore(fresh_database, max_size=1) as store:
        for _ in range(READS):
            with store.unit_of_work() as uow:
                uow.runs.get("t1", "nowhere")
        with sent_to(fresh_database) as seen, store.shared_transaction() as shared:
            with pytest.raises(NotFound), shared.unit() as unit:
                unit.runs.add(run("kept-out", tenant="t1"))
                unit.runs.get("t1", "kept-out")  # sends the insert
                raise NotFound("the work's own failure")
            with shared.unit() as unit:
                unit.runs.add(run("kept", tenant="t1"))
                unit.commit()
            shared.commit()
        assert "ROLLBACK TO SAVEPOINT ecp_unit" in seen, seen
        assert not [sql for sql in seen if sql.startswith("DEALLOCATE")], seen
        assert [sql for sql in prepared_on(store) if "FROM ecp_runs" in sql], prepared_on(store)
        with store.unit_of_work() as uow:
            assert uow.runs.get("t1", "kept") is not None
            assert uow.runs.get("t1", "kept-out") is None
