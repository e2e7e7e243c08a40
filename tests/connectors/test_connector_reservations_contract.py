"""Claiming abandoned reservations: the kit's suite on memory and PostgreSQL, and on PostgreSQL
what another transaction holds is skipped, never waited for (ADR 0050)."""

from datetime import timedelta

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.connector_reservations import (
    AbandonedReservationConformance,
    finished,
    held_test,
    hold,
)
from ecp_core.testing.samples import NOW
from ecp_postgres import PostgresStore, apply_migrations, rollback_migrations
from ecp_postgres.migrations import status as migration_status

pytestmark = pytest.mark.contract

LATER = NOW + timedelta(minutes=5)
MIGRATION = "connectors_0002_abandoned_reservations"


@pytest.mark.spec("§2.6 connector-abandoned-reservations")
class TestAbandonedReservations(OnEveryStore, AbandonedReservationConformance):
    pass


def _hold_all(store, *tests):
    with store.unit_of_work() as tx:
        for test in tests:
            hold(tx, test)
        tx.commit()


@pytest.mark.spec("§2.6 connector-abandoned-reservations")
def test_a_second_sweeper_skips_what_the_first_claimed(postgres_store):
    """Two claims at once share nothing out: the second takes the rest, without waiting."""
    tests = [held_test(f"op-{n}", campaign=f"c{n % 2}") for n in range(4)]
    _hold_all(postgres_store, *tests)
    with postgres_store.unit_of_work() as first:
        mine = first.connector_costs.claim_abandoned(LATER, 2)
        with postgres_store.unit_of_work() as second:
            theirs = second.connector_costs.claim_abandoned(LATER, 10)
    assert len(mine) == 2
    assert sorted(t.operation_id for t in mine + theirs) == [t.operation_id for t in tests]


@pytest.mark.spec("§2.6 connector-abandoned-reservations")
def test_a_scope_a_live_test_holds_is_left_for_a_later_pass(postgres_store):
    """A test settling in its scope holds the scope's row: the sweep skips that scope's tests."""
    busy, free = held_test("op-1", run_id="busy"), held_test("op-2", run_id="free")
    _hold_all(postgres_store, busy, free)
    with postgres_store.unit_of_work() as live:
        live.connector_costs.lock_scope("acme", "c1", "busy")
        with postgres_store.unit_of_work() as sweeper:
            assert sweeper.connector_costs.claim_abandoned(LATER, 10) == [free]
    with postgres_store.unit_of_work() as sweeper:
        assert sweeper.connector_costs.claim_abandoned(LATER, 10) == [busy, free]


def test_the_migration_fills_in_tests_stored_before_it(fresh_database):
    """Rows written before ``connectors_0002`` get their run key and reservation time."""
    old = [held_test("op-1"), held_test("op-2", run_id=None), held_test("op-3")]
    with PostgresStore(fresh_database, max_size=2) as store:
        _hold_all(store, *old)
        with store.unit_of_work() as tx:
            tx.connector_costs.save_test(finished(old[2]))
            tx.commit()
    applied = [name for name, done in migration_status(fresh_database) if done]
    since = len(applied) - applied.index(MIGRATION)
    rolled_back = rollback_migrations(fresh_database, since)
    assert MIGRATION in rolled_back
    assert sorted(apply_migrations(fresh_database)) == sorted(rolled_back)
    with PostgresStore(fresh_database, max_size=2) as store, store.unit_of_work() as tx:
        assert tx.connector_costs.claim_abandoned(LATER, 10) == old[:2]
