"""Retention: the kit's suite on memory and PostgreSQL, and PostgreSQL's tenant lock modes."""

import psycopg
import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.retention import RetentionRepositoryConformance

pytestmark = pytest.mark.contract


class TestRetentionRepository(OnEveryStore, RetentionRepositoryConformance):
    pass


def test_on_postgres_the_tenant_lock_is_shared_or_exclusive_per_tenant(postgres_store):
    """Erasures (shared) run together; a new hold (exclusive) waits for them, other tenants don't."""
    uow = postgres_store.unit_of_work

    def try_lock(tx, tenant_id, *, exclusive):
        tx._conn.execute("SET LOCAL lock_timeout = '200ms'")
        try:
            tx.retention.lock_tenant(tenant_id, exclusive=exclusive)
        except psycopg.errors.LockNotAvailable:
            return False
        return True

    with uow() as first:
        first.retention.lock_tenant("t1", exclusive=False)
        with uow() as second:
            assert try_lock(second, "t1", exclusive=False)
        with uow() as second:
            assert not try_lock(second, "t1", exclusive=True)
        with uow() as second:
            assert try_lock(second, "t2", exclusive=True)
        first.commit()
        with uow() as second:  # committing released the lock
            assert try_lock(second, "t1", exclusive=True)
