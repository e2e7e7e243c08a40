"""Dispatch claims: which run comes next, failure bookkeeping and header reads, on every store.

The rule (ADR 0019). A run is *eligible* when it is PENDING or RUNNING and not backing off at
the claim's instant. Its *rank* is its place, from 1, among its tenant's eligible runs by priority
(higher first, ADR 0077), then id (only the first ``candidates_per_tenant(tenants with eligible runs)`` count). A tenant's
*last service* is the latest claim (or counted failure) of any of its runs. A claim takes the run no other transaction
holds with the least (rank, last service with never first, run id) and becomes its tenant's
latest service. Hence, claim after committed claim, a tenant is never served twice in a row while
another tenant has an eligible run, and each tenant's runs are served highest priority first, then oldest first.
"""

import itertools
from collections.abc import Collection
from datetime import datetime, timedelta

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.deployments.model import Deployment
from ecp_core.errors import NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.engine.dispatch import candidates_per_tenant
from ecp_core.runs.run.model import FailureState, PauseSource, Run
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW, run
from ecp_core.types import RunStatus

RUNNABLE = (RunStatus.PENDING, RunStatus.RUNNING)
PAST, FUTURE = NOW - timedelta(seconds=1), NOW + timedelta(hours=1)


class Reference:
    """The rule above, written out plainly (within a tenant, higher priority first).

    With concurrency limits (ADR 0079): in a tenant that has a limit (its own or a deployment's),
    a run that holds no slot is eligible only while fewer than its tenant's limit of the tenant's
    runs hold one, and fewer than its deployment's limit of the deployment's runs do.
    """

    def __init__(
        self,
        runs: list[Run],
        tenant_limits: dict[str, int] | None = None,
        deployment_limits: dict[tuple[str, str], int] | None = None,
    ) -> None:
        """Know ``runs``, none of them claimed or failed yet, and the limits (none: no limit)."""
        self.runs = {r.run_id: r for r in runs}
        self.not_before: dict[str, datetime] = {}
        self.stamps: dict[str, int] = {}
        self.clock = itertools.count(1)
        self.tenant_limits = tenant_limits or {}
        self.deployment_limits = deployment_limits or {}

    def limited(self, tenant: str) -> bool:
        """Whether the tenant or one of its deployments has a limit."""
        return tenant in self.tenant_limits or any(t == tenant for t, _ in self.deployment_limits)

    def may_take_a_slot(self, r: Run) -> bool:
        """Whether ``r`` holds a slot, or may take one now."""
        if r.holds_slot or not self.limited(r.tenant_id):
            return True
        holders = [h for h in self.runs.values() if h.tenant_id == r.tenant_id and h.holds_slot]
        own = self.tenant_limits.get(r.tenant_id)
        if own is not None and len(holders) >= own:
            return False
        cap = self.deployment_limits.get((r.tenant_id, r.deployment_ref))
        return cap is None or sum(h.deployment_ref == r.deployment_ref for h in holders) < cap

    def fail(self, run_id: str, not_before: datetime) -> None:
        """Count a failure of ``run_id``: it backs off until ``not_before`` and is served."""
        self.not_before[run_id] = not_before
        self.stamps[run_id] = next(self.clock)

    def claim(self, now: datetime | None, locked: Collection[str] = ()) -> str | None:
        """The run id the next claim at ``now`` takes, when the runs ``locked`` are locked by other transactions."""
        eligible: dict[str, list[str]] = {}
        for run_id in sorted(self.runs, key=lambda i: (-self.runs[i].priority, i)):
            r = self.runs[run_id]
            waiting = now is not None and self.not_before.get(run_id, now) > now
            if r.status in RUNNABLE and not waiting and self.may_take_a_slot(r):
                eligible.setdefault(r.tenant_id, []).append(run_id)
        served: dict[str, int] = {}
        for run_id, stamp in self.stamps.items():
            tenant = self.runs[run_id].tenant_id
            served[tenant] = max(served.get(tenant, 0), stamp)
        candidates = [
            (rank, served.get(tenant, 0), run_id)
            for tenant, ids in eligible.items()
            for rank, run_id in enumerate(ids[: candidates_per_tenant(len(eligible))], start=1)
            if run_id not in locked
        ]
        return min(candidates)[2] if candidates else None

    def eligible_tenants(self, now: datetime | None) -> set[str]:
        """The tenants with an eligible run at ``now``."""
        return {
            r.tenant_id
            for r in self.runs.values()
            if r.status in RUNNABLE
            and (now is None or self.not_before.get(r.run_id, now) <= now)
            and self.may_take_a_slot(r)
        }


backlogs = st.lists(
    st.tuples(
        st.sampled_from("abc"),
        st.sampled_from([*RUNNABLE, *RUNNABLE, RunStatus.WAITING_APPROVAL, RunStatus.COMPLETED]),
        st.sampled_from([None, None, PAST, FUTURE]),
        st.sampled_from([5, 5, 0, 9]),
    ),
    max_size=14,
)
"""Runs to store: (tenant, status, backing off until, priority) each."""
scripts = st.lists(st.sampled_from(["keep", "keep", "finish", "undo"]), min_size=1, max_size=16)
"""What each claim's unit of work does next: commit, finish the run, or roll back."""

_examples = itertools.count()


def drain(uow: UnitOfWorkFactory) -> None:
    """Finish every runnable run an earlier example left, so only this example's are eligible."""
    while True:
        with uow() as tx:
            claim = tx.runs.claim_runnable(None)
            if claim is None:
                return
            left = tx.runs.get(claim.tenant_id, claim.run_id)
            assert left is not None
            tx.runs.save(attrs.evolve(left, status=RunStatus.COMPLETED))
            tx.commit()


class DispatchClaimProperties(ExampleStoreSuite):
    """Claim after claim follows the dispatch rule on random backlogs."""

    @settings(
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(backlog=backlogs, script=scripts)
    def test_claims_follow_the_rule_and_visit_tenants_in_turn(
        self,
        open_store: StoreOpener,
        backlog: list[tuple[str, RunStatus, datetime | None, int]],
        script: list[str],
    ) -> None:
        """Each claim takes the run the rule names; no tenant is served twice while others wait."""
        # Tenants and runs are new in each example (a common prefix keeps their order).
        prefix = f"x{next(_examples):05d}-"
        with open_store() as uow:
            drain(uow)
            self._check(uow, prefix, backlog, script)

    @staticmethod
    def _check(
        uow: UnitOfWorkFactory,
        prefix: str,
        backlog: list[tuple[str, RunStatus, datetime | None, int]],
        script: list[str],
    ) -> None:
        runs = [
            attrs.evolve(
                run(f"{prefix}run-{index:02d}", tenant=prefix + tenant, status=status),
                priority=priority,
            )
            for index, (tenant, status, _, priority) in enumerate(backlog)
        ]
        reference = Reference(runs)
        with uow() as tx:
            for r in runs:
                tx.runs.add(r)
            for r, (_, _, not_before, _) in zip(runs, backlog, strict=True):
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
                if claim is None or expected is None:
                    break
                assert claim.tenant_id == reference.runs[expected].tenant_id
                if others:
                    assert claim.tenant_id != previous, "a tenant was served twice in a row"
                if step == "undo":
                    continue  # rolled back: as if never claimed
                if step == "finish":
                    claimed = tx.runs.get(claim.tenant_id, claim.run_id)
                    assert claimed is not None
                    done = attrs.evolve(claimed, status=RunStatus.COMPLETED)
                    tx.runs.save(done)
                    reference.runs[done.run_id] = done
                tx.commit()
            reference.stamps[expected] = next(reference.clock)
            previous = claim.tenant_id


class DispatchClaimConformance(StoreSuite):
    """Dispatch claims: fair turns across tenants, backoffs, undo to the claim, header reads."""

    def test_a_deep_backlog_does_not_hold_back_another_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A deep backlog does not hold back another tenant."""
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

    @pytest.mark.spec("C14 pause")
    def test_paused_runs_are_never_claimed_and_a_deployment_pauses_its_live_runs(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Paused runs are never claimed; a deployment's pause reaches its live runs only."""
        with uow() as tx:
            tx.deployments.add(
                Deployment(
                    tenant_id="t1",
                    deployment_ref="dep",
                    graph_id="g",
                    graph_version=1,
                    graph_version_ref="g@1",
                    created_at=NOW,
                )
            )
            tx.runs.add(attrs.evolve(run("run-1"), paused_by=(PauseSource.RUN,)))
            tx.runs.add(run("run-2"))
            tx.runs.add(run("run-3", status=RunStatus.WAITING_APPROVAL))
            tx.runs.add(run("run-4", status=RunStatus.COMPLETED))
            tx.runs.add(run("other", tenant="t2"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.claim_runnable(NOW).run_id == "other"
        with uow() as tx:
            paused = tx.deployments.set_paused("t1", "dep", paused=True)
            assert paused is not None
            assert paused.paused
            assert tx.deployments.set_paused("t1", "nope", paused=True) is None
            assert tx.runs.pause_deployment_runs("t1", "dep", paused=True) == 3
            assert tx.runs.pause_deployment_runs("t1", "dep", paused=True) == 0
            tx.commit()
        with uow() as tx:
            deployment = tx.deployments.get("t1", "dep")
            assert deployment is not None
            assert deployment.paused
            by = {r: tx.runs.get("t1", r) for r in ("run-1", "run-2", "run-3", "run-4")}
            assert {r: found.paused_by for r, found in by.items() if found is not None} == {
                "run-1": (PauseSource.RUN, PauseSource.DEPLOYMENT),
                "run-2": (PauseSource.DEPLOYMENT,),
                "run-3": (PauseSource.DEPLOYMENT,),
                "run-4": (),
            }
            claim = tx.runs.claim_runnable(NOW)
            assert claim is not None
            assert claim.tenant_id == "t2"
        with uow() as tx:
            assert tx.runs.pause_deployment_runs("t1", "dep", paused=False) == 3
            tx.commit()
        with uow() as tx:
            first = tx.runs.get("t1", "run-1")
            assert first is not None
            assert first.paused_by == (PauseSource.RUN,)
            claimed = {tx.runs.claim_runnable(NOW).run_id for _ in range(2)}
            assert claimed <= {"run-2", "other"}

    @pytest.mark.spec("C8 poison-runs")
    def test_backing_off_runs_are_skipped_until_their_time(self, uow: UnitOfWorkFactory) -> None:
        """Backing off runs are skipped until their time."""
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
                assert (claim.run_id, claim.tenant_id, claim.dispatch_failures) == (
                    "run-1",
                    "t1",
                    2,
                )
        with uow() as tx:
            tx.runs.clear_dispatch_failures("t1", "run-1")
            tx.commit()
        with uow() as tx:
            claim = tx.runs.claim_runnable(NOW)
            assert (claim.run_id, claim.dispatch_failures) == ("run-1", 0)

    def test_undo_to_claim_keeps_the_claim_and_drops_the_attempt(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Undo to claim keeps the claim and drops the attempt."""
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
            # The claim took the run a slot (ADR 0079), which the undo keeps with the claim.
            assert tx.runs.get("t1", "run-1") == attrs.evolve(run("run-1"), holds_slot=True)
            # The claim and the counted failure both stamped t1: t2 is served next.
            assert tx.runs.claim_runnable(NOW).run_id == "run-2"

    def test_a_header_read_leaves_payloads_out_and_a_header_write_keeps_them(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A header read leaves payloads out and a header write keeps them."""
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
