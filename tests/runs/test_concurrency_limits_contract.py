"""Concurrency limits at the claim (ADR 0079): the kit's suites on memory and PostgreSQL."""

from collections import Counter

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.testing.conformance.limits import (
    LimitClaimProperties,
    LimitConformance,
    deployment,
    holders,
    of,
)
from ecp_core.testing.samples import NOW

pytestmark = [pytest.mark.contract, pytest.mark.spec("C14 limits-claim")]


class TestLimits(OnEveryStore, LimitConformance):
    pass


class TestLimitClaimProperties(OnEveryStoreEachExample, LimitClaimProperties):
    pass


def test_two_claims_at_once_never_take_the_last_slot_together(postgres_store):
    """The second admission finds the tenant's limits row held and admits nothing."""
    with postgres_store.unit_of_work() as tx:
        tx.deployments.add(deployment("t1", "dep", 1))
        for run_id in ("run-0", "run-1"):
            tx.runs.add(of("t1", "dep", run_id))
        tx.commit()
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        taken = first.runs.claim_runnable(NOW)
        assert (taken.run_id, taken.admitting) == ("run-0", True)
        # run-0 is locked and its admission not yet committed: the slot looks free to second.
        late = second.runs.claim_runnable(NOW)
        assert (late.run_id, late.admitting) == ("run-1", True)
        second.commit()
        first.commit()
    with postgres_store.unit_of_work() as tx:
        assert holders(tx, "t1") == Counter({"dep": 1})
        held = tx.runs.get("t1", "run-0")
        assert held is not None
        assert held.holds_slot
