"""Provider-bill reconciliation: the kit's suites on memory and PostgreSQL.

The statements repository is checked on both stores; PostgreSQL's provider events and whole
reports are checked against the in-memory reference; and statement times read back in UTC
whatever the session's time zone.
"""

import pytest
from tests.support.stores import OnEveryStore, OnPostgresEachExample

from ecp_core.testing.conformance.reconciliation import (
    ReconciliationMatchesReference,
    StatementRepositoryConformance,
    spelled,
    stored_statement,
)
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.contract


class TestStatementRepository(OnEveryStore, StatementRepositoryConformance):
    pass


class TestPostgresReconciliationMatchesReference(
    OnPostgresEachExample, ReconciliationMatchesReference
):
    pass


def test_statement_times_read_back_in_utc_whatever_the_session_time_zone(fresh_database):
    separator = "&" if "?" in fresh_database else "?"
    kolkata = f"{fresh_database}{separator}options=-c%20TimeZone%3DAsia/Kolkata"
    stored = stored_statement()
    with PostgresStore(kolkata, max_size=1) as store:
        with store.unit_of_work() as tx:
            tx.reconciliation.add_statement(stored)
            tx.commit()
        with store.unit_of_work() as tx:
            found = tx.reconciliation.statement("t1", "openai", "openai-2026-11")
    assert found == stored
    assert spelled(found) == spelled(stored)
