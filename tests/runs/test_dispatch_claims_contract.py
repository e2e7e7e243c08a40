"""Dispatch claims: the kit's suites on memory and PostgreSQL, and a claim that skips a locked run."""

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.testing.conformance.dispatch import DispatchClaimConformance, DispatchClaimProperties
from ecp_core.testing.samples import NOW, run

pytestmark = pytest.mark.contract


class TestDispatchClaims(OnEveryStore, DispatchClaimConformance):
    pass


class TestDispatchClaimProperties(OnEveryStoreEachExample, DispatchClaimProperties):
    pass


def test_a_locked_run_is_skipped_for_the_next_by_rank(postgres_store):
    with postgres_store.unit_of_work() as tx:
        for run_id, tenant in (("run-1", "a"), ("run-2", "a"), ("run-3", "b")):
            tx.runs.add(run(run_id, tenant=tenant))
        tx.commit()
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        assert first.runs.claim_runnable(NOW).run_id == "run-1"
        # run-1 is locked; b's oldest (rank 1) comes before a's second (rank 2).
        assert second.runs.claim_runnable(NOW).run_id == "run-3"
        with postgres_store.unit_of_work() as third:
            assert third.runs.claim_runnable(NOW).run_id == "run-2"
