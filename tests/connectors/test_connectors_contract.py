"""The connector ports: the kit's suites on memory and PostgreSQL, and the scope lock across
connections (a second transaction waits for the first to commit its reservation)."""

import threading
from decimal import Decimal

import attrs
import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.connectors import (
    ConnectorCostRepositoryConformance,
    ConnectorRepositoryConformance,
)

pytestmark = pytest.mark.contract


class TestConnectorRepository(OnEveryStore, ConnectorRepositoryConformance):
    pass


class TestConnectorCostRepository(OnEveryStore, ConnectorCostRepositoryConformance):
    pass


def test_a_locked_scope_holds_off_a_second_transaction_until_it_commits(postgres_store):
    """The second lock reads the totals the first committed, never the ones before."""
    held = threading.Event()
    seen = {}

    def second():
        held.wait(10)
        with postgres_store.unit_of_work() as tx:
            seen["second"] = tx.connector_costs.lock_scope("acme", "c1", None).reserved_usd

    with postgres_store.unit_of_work() as tx:
        scope = tx.connector_costs.lock_scope("acme", "c1", None)
        worker = threading.Thread(target=second)
        worker.start()
        held.set()
        worker.join(0.5)  # it waits on the row lock meanwhile
        assert "second" not in seen
        tx.connector_costs.save_scope(attrs.evolve(scope, reserved_usd=Decimal("0.4")))
        tx.commit()
    worker.join(10)
    assert seen == {"second": Decimal("0.4")}
