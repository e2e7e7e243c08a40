"""Dispatch claims: which run comes next, failure bookkeeping and header reads, on every store.

The rule (ADR 0019). A run is *eligible* when it is PENDING or RUNNING and not backing off at
the claim's instant. Its *rank* is its place, from 1, among its tenant's eligible runs in id
order (only the first ``candidates_per_tenant(tenants with eligible runs)`` count). A tenant's *last service* is the
latest claim (or counted failure) of any of its runs. A claim takes the run no other transaction
holds with the least (rank, last service with never first, run id) and becomes its tenant's
latest service. Hence, claim after committed claim, a tenant is never served twice in a row while
another tenant has an eligible run, and each tenant's runs are served oldest first.
"""

import itertools
from datetime import timedelta

import attrs
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.contract.records import NOW, run

from ecp_core.errors import NotFound
from ecp_core.memory import MemoryStore
from ecp_core.runs.dispatch import candidates_per_tenant
from ecp_core.runs.model import FailureState
from ecp_core.types import RunStatus
from ecp_postgres import PostgresStore

RUNNABLE = (RunStatus.PENDING, RunStatus.RUNNING)
PAST, FUTURE = NOW - timedelta(seconds=1), NOW + timedelta(hours=1)


class Reference:
    """The rule above, written out plainly."""

    def __init__(self, runs):
        self.runs = {r.run_id: r for r in runs}
        self.not_before = {}
        self.stamps = {}
        self.clock = itertools.count(1)

    def fail(self, run_id, not_before):
        self.not_before[run_id] = not_before
        self.stamps[run_id] = next(self.clock)

    def claim(self, now, held=()):
        eligible = {}
        for run_id in sorted(self.runs):
            r = self.runs[run_id]
            waiting = now is not None and self.not_before.get(run_id, now) > now
            if r.status in RUNNABLE and not waiting:
                eligible.setdefault(r.tenant_id, []).append(run_id)
        served = {}
        for run_id, stamp in self.stamps.items():
            tenant = self.runs[run_id].tenant_id
            served[tenant] = max(served.get(tenant, 0), stamp)
        candidates = [
            (rank, served.get(tenant, 0), run_id)
            for tenant, ids in eligible.items()
            for rank, run_id in enumerate(ids[: candidates_per_tenant(len(eligible))], start=1)
            if run_id not in held
        ]
        return min(candidates)[2] if candidates else None

    def eligible_tenants(self, now):
        return {
            r.tenant_id
            for r in self.runs.values()
            if r.status in RUNNABLE and (now is None or self.not_before.get(r.run_id, now) <= now)
        }


backlogs = st.lists(
    st.tuples(
        st.sampled_from("abc"),
        st.sampled_from([*RUNNABLE, *RUNNABLE, RunStatus.WAITING_APPROVAL, RunStatus.COMPLETED]),
        st.sampled_from([None, None, PAST, FUTURE]),
    ),
    max_size=14,
)
scripts = st.lists(st.sampled_from(["keep", "keep", "finish", "undo"]), min_size=1, max_size=16)


@pytest.fixture(params=["memory", "postgres"])
def fresh_store(request):
    """Make a new, empty store per Hypothesis example (a pool opened inside the example)."""
    if request.param == "memory":
        yield lambda: MemoryStore().unit_of_work
        return
    url = request.getfixturevalue("fresh_database")
    opened = []

    def make():
        while opened:
            opened.pop().close()
        store = PostgresStore(url, min_size=1, max_size=2)
        store.pool.wait()
        opened.append(store)
        with psycopg.connect(url) as conn:
            conn.execute("TRUNCATE ecp_runs")
        return store.unit_of_work

    yield make
    while opened:
        opened.pop().close()


@settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(backlog=backlogs, script=scripts)
def test_claims_follow_the_rule_and_visit_tenants_in_turn(fresh_store, backlog, script):
    uow = fresh_store()
    runs = [
        run(f"run-{index:02d}", tenant=tenant, status=status)
        for index, (tenant, status, _) in enumerate(backlog)
    ]
    reference = Reference(runs)
    with uow() as tx:
        for r in runs:
            tx.runs.add(r)
        for r, (_, _, not_before) in zip(runs, backlog, strict=True):
            if not_before is not None:
                tx.runs.record_dispatch_failure(r.tenant_id, r.run_id, not_before)
                reference.fail(r.run_id, not_before)
        tx.commit()
    previous = None  # the tenant of the last committed claim
    for step in script:
        expected = reference.claim(NOW)
        others = reference.eligible_tenants(NOW) - {previous}
        with uow() as tx:
            claim = tx.runs.claim_runnable(NOW)
            assert (claim and claim.run_id) == expected
            if claim is None:
                break
            assert claim.tenant_id == reference.runs[expected].tenant_id
            if others:
                assert claim.tenant_id != previous, "a tenant was served twice in a row"
            if step == "undo":
                continue  # rolled back: as if never claimed
            if step == "finish":
                done = attrs.evolve(
                    tx.runs.get(claim.tenant_id, claim.run_id), status=RunStatus.COMPLETED
                )
                tx.runs.save(done)
                reference.runs[done.run_id] = done
            tx.commit()
        reference.stamps[expected] = next(reference.clock)
        previous = claim.tenant_id


def test_a_deep_backlog_does_not_hold_back_another_tenant(uow):
    with uow() as tx:
        for index in range(40):
            tx.runs.add(run(f"a-{index:02d}", tenant="a"))
        tx.runs.add(run("z-new", tenant="b"))
        tx.commit()
    claimed = []
    for _ in range(6):
        with uow() as tx:
            claimed.append(tx.runs.claim_runnable(NOW).run_id)
            tx.commit()
    assert claimed == ["a-00", "z-new", "a-00", "z-new", "a-00", "z-new"]


def test_backing_off_runs_are_skipped_until_their_time(uow):
    with uow() as tx:
        tx.runs.add(run("run-1"))
        tx.runs.add(run("run-2"))
        assert tx.runs.record_dispatch_failure("t1", "run-1", FUTURE) == 1
        assert tx.runs.record_dispatch_failure("t1", "run-1", FUTURE) == 2
        with pytest.raises(NotFound):
            tx.runs.record_dispatch_failure("t2", "run-1", FUTURE)
        tx.commit()
    with uow() as tx:
        assert tx.runs.claim_runnable(NOW).run_id == "run-2"
    for moment in (FUTURE, None):  # None: backoffs do not count
        with uow() as tx:
            claim = tx.runs.claim_runnable(moment)
            assert (claim.run_id, claim.tenant_id, claim.dispatch_failures) == ("run-1", "t1", 2)
    with uow() as tx:
        tx.runs.clear_dispatch_failures("t1", "run-1")
        tx.commit()
    with uow() as tx:
        claim = tx.runs.claim_runnable(NOW)
        assert (claim.run_id, claim.dispatch_failures) == ("run-1", 0)


def test_undo_to_claim_keeps_the_claim_and_drops_the_attempt(uow):
    with uow() as tx:
        tx.runs.add(run("run-1"))
        tx.runs.add(run("run-2", tenant="t2"))
        tx.commit()
    with uow() as tx:
        claim = tx.runs.claim_runnable(NOW)
        assert claim.run_id == "run-1"
        tx.runs.save(attrs.evolve(run("run-1"), state={"changed": True}, steps=5))
        tx.runs.undo_to_claim()
        tx.runs.record_dispatch_failure("t1", "run-1", PAST)
        tx.commit()
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") == run("run-1")
        # The claim and the counted failure both stamped t1: t2 is served next.
        assert tx.runs.claim_runnable(NOW).run_id == "run-2"


def test_a_header_read_leaves_payloads_out_and_a_header_write_keeps_them(uow):
    stored = attrs.evolve(
        run("run-1", status=RunStatus.RUNNING),
        output={"o": 1},
        metadata={"m": 1},
        artifacts=("art",),
        error={"e": 1},
    )
    with uow() as tx:
        tx.runs.add(stored)
        tx.commit()
    with uow() as tx:
        header = tx.runs.lock_header("t1", "run-1")
        assert tx.runs.lock_header("t2", "run-1") is None
        assert header == attrs.evolve(
            stored, state={}, output=None, metadata=None, artifacts=None, error=None
        )
        failed = attrs.evolve(
            header,
            status=RunStatus.FAILED,
            attempts=4,
            failure_state=FailureState(reason="dispatch_error", node_id="a", message="m"),
            updated_at=NOW + timedelta(seconds=5),
        )
        tx.runs.save_header(failed)
        with pytest.raises(NotFound):
            tx.runs.save_header(attrs.evolve(failed, tenant_id="t2"))
        tx.commit()
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") == attrs.evolve(
            failed,
            state=stored.state,
            output={"o": 1},
            metadata={"m": 1},
            artifacts=("art",),
            error={"e": 1},
        )


def test_a_held_run_is_skipped_for_the_next_by_rank(postgres_store):
    with postgres_store.unit_of_work() as tx:
        for run_id, tenant in (("run-1", "a"), ("run-2", "a"), ("run-3", "b")):
            tx.runs.add(run(run_id, tenant=tenant))
        tx.commit()
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        assert first.runs.claim_runnable(NOW).run_id == "run-1"
        # run-1 is held; b's oldest (rank 1) comes before a's second (rank 2).
        assert second.runs.claim_runnable(NOW).run_id == "run-3"
        with postgres_store.unit_of_work() as third:
            assert third.runs.claim_runnable(NOW).run_id == "run-2"
