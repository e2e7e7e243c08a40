"""Concurrency limits at the claim (ADR 0079), on every store.

A run *holds a slot* from the claim that takes it until it waits, is paused or ends. In a tenant
with a limit (its own ``max_concurrent_runs`` or a deployment's), a claim takes a run that holds
no slot only while the tenant and the run's deployment are under their limits, and says it is
``admitting`` it (the unit of work then commits at once); a run that holds a slot is claimed as
ever. A limited deployment does not hold back the tenant's other deployments, and a claim never
makes more runs hold a slot than a limit allows (unless the limit was lowered below what was
held: then the count does not grow).
"""

import itertools
from collections import Counter
from datetime import timedelta

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.deployments.model import Deployment, TenantLimits
from ecp_core.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ecp_core.runs.run.model import Run
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.conformance.dispatch import RUNNABLE, Reference, drain
from ecp_core.testing.samples import NOW, run
from ecp_core.types import RunStatus

_examples = itertools.count()


def deployment(tenant: str, ref: str, limit: int | None = None) -> Deployment:
    """A deployment of graph ``g@1`` with the given limit."""
    return Deployment(
        tenant_id=tenant,
        deployment_ref=ref,
        graph_id="g",
        graph_version=1,
        graph_version_ref="g@1",
        created_at=NOW,
        max_concurrent_runs=limit,
    )


def of(tenant: str, ref: str, run_id: str, status: RunStatus = RunStatus.PENDING) -> Run:
    """A run of deployment ``ref``."""
    return attrs.evolve(run(run_id, tenant=tenant, status=status), deployment_ref=ref)


def holders(tx: UnitOfWork, tenant: str) -> Counter[str]:
    """How many of the tenant's runs hold a slot, by deployment."""
    held: Counter[str] = Counter()
    for run_id in tx.runs.ids_of(tenant):
        found = tx.runs.get(tenant, run_id)
        if found is not None and found.holds_slot:
            held[found.deployment_ref] += 1
    return held


def claim_and_commit(uow: UnitOfWorkFactory) -> tuple[str, bool] | None:
    """One claim, committed: the run and whether it was admitting."""
    with uow() as tx:
        claim = tx.runs.claim_runnable(NOW)
        tx.commit()
    return None if claim is None else (claim.run_id, claim.admitting)


def set_aside(uow: UnitOfWorkFactory, tenant: str, run_id: str) -> None:
    """Back the run off for an hour: it keeps its slot, and claims pass it by (as if running)."""
    with uow() as tx:
        tx.runs.record_dispatch_failure(tenant, run_id, NOW + timedelta(hours=1), counted=False)
        tx.commit()


def take(uow: UnitOfWorkFactory, tenant: str) -> tuple[str, bool] | None:
    """One claim, committed, its run then set aside: the run and whether it was admitting."""
    taken = claim_and_commit(uow)
    if taken is not None:
        set_aside(uow, tenant, taken[0])
    return taken


def finish(uow: UnitOfWorkFactory, tenant: str, run_id: str) -> None:
    """End the run (COMPLETED): its slot is free."""
    with uow() as tx:
        found = tx.runs.lock(tenant, run_id)
        assert found is not None
        tx.runs.save(attrs.evolve(found, status=RunStatus.COMPLETED))
        tx.commit()


limit_values = st.sampled_from([None, None, 1, 2])
limited_backlogs = st.lists(
    st.tuples(
        st.sampled_from("ab"),
        st.sampled_from(["d1", "d2"]),
        st.sampled_from([*RUNNABLE, *RUNNABLE, RunStatus.WAITING_TASK]),
        st.booleans(),
        st.sampled_from([5, 5, 9]),
    ),
    max_size=12,
)
"""Runs to store: (tenant, deployment, status, holds a slot, priority) each."""


class LimitClaimProperties(ExampleStoreSuite):
    """Claim after claim follows the dispatch rule with limits, on random backlogs and limits."""

    @settings(
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(
        backlog=limited_backlogs,
        tenant_limits=st.fixed_dictionaries({"a": limit_values, "b": limit_values}),
        deployment_limits=st.fixed_dictionaries(
            {(t, d): limit_values for t in "ab" for d in ("d1", "d2")}
        ),
        script=st.lists(st.sampled_from(["keep", "keep", "finish", "undo"]), max_size=16),
    )
    def test_claims_respect_concurrency_limits(
        self,
        open_store: StoreOpener,
        backlog: list[tuple[str, str, RunStatus, bool, int]],
        tenant_limits: dict[str, int | None],
        deployment_limits: dict[tuple[str, str], int | None],
        script: list[str],
    ) -> None:
        """Each claim takes the run the rule names, admitting exactly the runs without a slot."""
        prefix = f"l{next(_examples):05d}-"
        runs = [
            attrs.evolve(
                of(prefix + tenant, ref, f"{prefix}run-{index:02d}", status),
                holds_slot=holds,
                priority=priority,
            )
            for index, (tenant, ref, status, holds, priority) in enumerate(backlog)
        ]
        tenants = {prefix + t: limit for t, limit in tenant_limits.items() if limit is not None}
        refs = {
            (prefix + t, d): lim for (t, d), lim in deployment_limits.items() if lim is not None
        }
        reference = Reference(runs, tenants, refs)
        with open_store() as uow:
            drain(uow)
            with uow() as tx:
                for t, d in deployment_limits:
                    tx.deployments.add(deployment(prefix + t, d, refs.get((prefix + t, d))))
                for tenant, limit in tenants.items():
                    tx.deployments.set_tenant_limit(tenant, limit)
                for r in runs:
                    tx.runs.add(r)
                tx.commit()
            for step in script:
                self._step(uow, reference, step)

    @staticmethod
    def _step(uow: UnitOfWorkFactory, reference: Reference, step: str) -> None:
        expected = reference.claim(NOW)
        with uow() as tx:
            claim = tx.runs.claim_runnable(NOW)
            assert (claim and claim.run_id) == expected
            if claim is None or expected is None:
                return
            claimed = reference.runs[expected]
            admitting = reference.limited(claimed.tenant_id) and not claimed.holds_slot
            assert claim.admitting == admitting
            if step == "undo":
                return  # rolled back: as if never claimed
            before = holders(tx, claimed.tenant_id)
            if step == "finish":
                found = tx.runs.get(claim.tenant_id, claim.run_id)
                assert found is not None
                assert found.holds_slot
                claimed = attrs.evolve(found, status=RunStatus.COMPLETED)
                tx.runs.save(claimed)
            else:
                claimed = attrs.evolve(claimed, holds_slot=True)
            tx.commit()
        reference.runs[expected] = claimed
        reference.stamps[expected] = next(reference.clock)
        with uow() as tx:
            after = holders(tx, claimed.tenant_id)
        tenant_cap = reference.tenant_limits.get(claimed.tenant_id)
        assert tenant_cap is None or after.total() <= max(tenant_cap, before.total())
        for ref, count in after.items():
            cap = reference.deployment_limits.get((claimed.tenant_id, ref))
            assert cap is None or count <= max(cap, before[ref])


class LimitConformance(StoreSuite):
    """Limits as stored, and the claim under them."""

    def test_limits_are_stored_and_say_whether_a_tenant_has_any(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A deployment's limit and the tenant's are stored; ``limited`` follows both."""
        with uow() as tx:
            tx.deployments.add(deployment("t1", "d1"))
            tx.deployments.add(deployment("t2", "d1", 3))
            tx.commit()
        with uow() as tx:
            assert not tx.deployments.limited("t1")
            assert tx.deployments.limited("t2")
            assert tx.deployments.tenant_limits("t1") == TenantLimits()
            changed = tx.deployments.set_limit("t1", "d1", 2)
            assert changed is not None
            assert changed.max_concurrent_runs == 2
            assert tx.deployments.set_limit("t1", "nope", 2) is None
            tx.commit()
        with uow() as tx:
            found = tx.deployments.get("t1", "d1")
            assert found is not None
            assert found.max_concurrent_runs == 2
            assert tx.deployments.limited("t1")
            tx.deployments.set_limit("t1", "d1", None)
            assert tx.deployments.set_tenant_limit("t1", 4) == TenantLimits(max_concurrent_runs=4)
            tx.commit()
        with uow() as tx:
            assert tx.deployments.limited("t1")
            assert tx.deployments.tenant_limits("t1") == TenantLimits(max_concurrent_runs=4)
            tx.deployments.set_tenant_limit("t1", None)
            tx.commit()
        with uow() as tx:
            assert not tx.deployments.limited("t1")
            assert tx.deployments.tenant_limits("t1") == TenantLimits()

    def test_a_full_deployment_queues_its_runs_and_not_the_tenants_others(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Two slots: two admissions, then only their holders and another deployment's runs."""
        with uow() as tx:
            tx.deployments.add(deployment("t1", "capped", 2))
            tx.deployments.add(deployment("t1", "free"))
            for index in range(4):
                tx.runs.add(of("t1", "capped", f"run-{index}"))
            tx.runs.add(of("t1", "free", "run-9"))
            tx.commit()
        assert take(uow, "t1") == ("run-0", True)
        assert take(uow, "t1") == ("run-1", True)
        # capped is full: run-2 and run-3 wait, and the other deployment's run is admitted.
        assert take(uow, "t1") == ("run-9", True)
        assert claim_and_commit(uow) is None
        with uow() as tx:
            assert holders(tx, "t1") == Counter({"capped": 2, "free": 1})
        finish(uow, "t1", "run-0")
        assert take(uow, "t1") == ("run-2", True)
        assert claim_and_commit(uow) is None

    def test_a_tenant_limit_counts_every_deployment_and_a_lowered_limit_admits_none(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Held slots count across deployments; below what is held, no run is admitted."""
        with uow() as tx:
            tx.deployments.add(deployment("t1", "d1"))
            tx.deployments.add(deployment("t1", "d2"))
            tx.runs.add(attrs.evolve(of("t1", "d1", "run-0"), holds_slot=True))
            tx.runs.add(attrs.evolve(of("t1", "d2", "run-1"), holds_slot=True))
            tx.runs.add(of("t1", "d2", "run-2"))
            tx.runs.add(of("t1", "d1", "run-3", RunStatus.WAITING_APPROVAL))
            tx.deployments.set_tenant_limit("t1", 1)
            tx.commit()
        assert take(uow, "t1") == ("run-0", False)
        assert take(uow, "t1") == ("run-1", False)
        assert claim_and_commit(uow) is None  # two held, one allowed
        finish(uow, "t1", "run-0")
        assert claim_and_commit(uow) is None  # one held, one allowed
        finish(uow, "t1", "run-1")
        assert claim_and_commit(uow) == ("run-2", True)
        with uow() as tx:
            assert holders(tx, "t1") == Counter({"d2": 1})

    def test_a_run_gives_its_slot_up_when_it_waits_or_is_paused(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Waiting or paused, a run holds no slot; a deployment's pause frees its runs' slots."""
        with uow() as tx:
            tx.deployments.add(deployment("t1", "dep", 1))
            tx.runs.add(of("t1", "dep", "run-0"))
            tx.commit()
        assert claim_and_commit(uow) == ("run-0", True)
        with uow() as tx:
            assert tx.deployments.set_paused("t1", "dep", paused=True) is not None
            assert tx.runs.pause_deployment_runs("t1", "dep", paused=True) == 1
            tx.commit()
        with uow() as tx:
            found = tx.runs.get("t1", "run-0")
            assert found is not None
            assert not found.holds_slot
            tx.runs.pause_deployment_runs("t1", "dep", paused=False)
            tx.commit()
        assert claim_and_commit(uow) == ("run-0", True)
        with uow() as tx:
            found = tx.runs.lock("t1", "run-0")
            assert found is not None
            assert found.holds_slot
            tx.runs.save(attrs.evolve(found, status=RunStatus.WAITING_TASK))
            tx.commit()
        with uow() as tx:
            assert holders(tx, "t1") == Counter()
