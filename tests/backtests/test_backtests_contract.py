"""BacktestRepository: the kit's suite on memory and PostgreSQL, and claims across connections."""

import threading

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.backtests import SEALED, BacktestRepositoryConformance, backtest
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.contract


class TestBacktestRepository(OnEveryStore, BacktestRepositoryConformance):
    pass


def test_two_workers_never_claim_the_same_backtest(postgres_store):
    """FOR UPDATE SKIP LOCKED: a second claimer skips the held row and takes the next."""
    with postgres_store.unit_of_work() as tx:
        tx.backtests.add(backtest(1), SEALED)
        tx.backtests.add(backtest(2, minutes=1), SEALED)
        tx.commit()
    held = threading.Event()
    release = threading.Event()
    claims = {}

    def first():
        with postgres_store.unit_of_work() as tx:
            claims["first"] = tx.backtests.claim(NOW)[0].backtest_id
            held.set()
            release.wait(10)

    worker = threading.Thread(target=first)
    worker.start()
    held.wait(10)
    with postgres_store.unit_of_work() as tx:
        claims["second"] = tx.backtests.claim(NOW)[0].backtest_id
        found_third = tx.backtests.claim(NOW)
    release.set()
    worker.join()
    assert claims == {"first": "bt-0001", "second": "bt-0002"}
    assert found_third is not None  # the same transaction sees its own held row again
