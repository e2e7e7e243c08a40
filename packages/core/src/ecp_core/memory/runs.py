"""The run repository in memory: runs, their headers, and the fair dispatch claim."""

from datetime import datetime
from typing import Any

import attrs

from ecp_core.errors import exists, missing
from ecp_core.memory.deployments import deployment_limits, tenant_limits
from ecp_core.memory.retention import held
from ecp_core.memory.tables import Repository, detached
from ecp_core.retention.rules import TTL_ERASABLE
from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.engine.dispatch import candidates_per_tenant
from ecp_core.runs.engine.slots import Slots
from ecp_core.runs.run.model import PauseSource, Run, RunClaim, with_pause
from ecp_core.runs.run.search import RunFilter
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import RunStatus


@attrs.frozen
class _Dispatch:
    """A run's dispatch bookkeeping: failures in a row, backoff end, latest claim number."""

    failures: int = 0
    not_before: datetime | None = None
    claim: int | None = None


_PAYLOAD_KEPT = ("state", "output", "metadata", "artifacts", "error")
_PAYLOAD_EMPTY: dict[str, Any] = {
    "state": {},
    "output": None,
    "paused": None,
    "approved_action": None,
    "metadata": None,
    "artifacts": None,
    "error": None,
}


class MemoryRuns(Repository):
    """RunRepository in memory."""

    _claimed_at: int | None = None
    """Length of the unit of work's undo log right after its last claim."""

    def add(self, run: Run) -> None:
        """Store a new run."""
        if run.run_id in self._t.table("runs"):
            raise exists("run", run.run_id)
        self._t.put("runs", run.run_id, run)
        if run.idempotency_key is not None:
            key = (run.tenant_id, run.deployment_ref, run.idempotency_key)
            self._t.put("run_keys", key, run.run_id)

    @detached
    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        run: Run | None = self._t.table("runs").get(run_id)
        return run if run is not None and run.tenant_id == tenant_id else None

    @detached
    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """The run (the unit of work already holds the store lock)."""
        return self.get(tenant_id, run_id)

    @detached
    def lock_for_approval(
        self, tenant_id: str, approval_id: str
    ) -> tuple[ApprovalRecord, Run | None] | None:
        """The tenant's approval and its run (the unit of work already holds the store lock)."""
        approval: ApprovalRecord | None = self._t.table("approvals").get(approval_id)
        if approval is None or approval.tenant_id != tenant_id:
            return None
        return approval, self.get(tenant_id, approval.run_id)

    def save(self, run: Run) -> None:
        """Replace a stored run."""
        if self.get(run.tenant_id, run.run_id) is None:
            raise missing("run", run.run_id)
        self._t.put("runs", run.run_id, run)

    @detached
    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this key, or None."""
        run_id = self._t.table("run_keys").get((tenant_id, deployment_ref, key))
        return None if run_id is None else self.get(tenant_id, run_id)

    def _of(self, tenant_id: str) -> list[Run]:
        return [run for run in self._t.table("runs").values() if run.tenant_id == tenant_id]

    @detached
    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Newest first, older than ``before``."""
        runs = sorted(self._of(tenant_id), key=lambda run: run.run_id, reverse=True)
        if before is not None:
            runs = [run for run in runs if run.run_id < before]
        return runs[:limit]

    @detached
    def search(
        self, tenant_id: str, where: RunFilter, *, limit: int, before: str | None = None
    ) -> list[Run]:
        """The runs ``where`` admits, newest first, older than ``before``."""
        found = [
            run
            for run in self._of(tenant_id)
            if where.admits(run) and (before is None or run.run_id < before)
        ]
        return sorted(found, key=lambda run: run.run_id, reverse=True)[:limit]

    def count(self, tenant_id: str) -> int:
        """How many runs the tenant has."""
        return len(self._of(tenant_id))

    @detached
    def children(
        self, tenant_id: str, parent_run_id: str, *, limit: int, after: str | None = None
    ) -> list[Run]:
        """The parent's child runs by run id, after ``after``."""
        found = sorted(
            (
                run
                for run in self._of(tenant_id)
                if run.parent_run_id == parent_run_id and (after is None or run.run_id > after)
            ),
            key=lambda run: run.run_id,
        )
        return found[:limit]

    def _lineage_ended(self, run: Run) -> bool:
        """Whether every ancestor of ``run`` has ended (or is gone)."""
        runs = self._t.table("runs")
        return all(
            runs[ancestor].status in TERMINAL
            for ancestor in run.ancestor_run_ids
            if ancestor in runs
        )

    @detached
    def runnable(self, limit: int) -> list[Run]:
        """PENDING or RUNNING runs, oldest first."""
        active = (RunStatus.PENDING, RunStatus.RUNNING)
        runs = [run for run in self._t.table("runs").values() if run.status in active]
        return sorted(runs, key=lambda run: run.run_id)[:limit]

    def _dispatch(self, run_id: str) -> _Dispatch:
        found: _Dispatch | None = self._t.table("run_dispatch").get(run_id)
        return found or _Dispatch()

    def _stamp(self) -> int:
        """A claim number above every earlier one."""
        stamps = [d.claim for d in self._t.table("run_dispatch").values() if d.claim is not None]
        return max(stamps, default=0) + 1

    def claim_runnable(self, now: datetime | None = None) -> RunClaim | None:
        """The next run by (rank in its tenant, tenant's last service, id); stamped as claimed.

        In a tenant with concurrency limits, a run without a slot is eligible only while its
        tenant and deployment are under their limits, and is then admitted (ADR 0079). The unit
        of work holds the store lock, so no run is locked by another transaction.
        """
        active = (RunStatus.PENDING, RunStatus.RUNNING)
        by_tenant: dict[str, list[str]] = {}
        served: dict[str, int] = {}
        slots: dict[str, Slots | None] = {}
        runs = self._t.table("runs")
        # Within a tenant: higher priority first, then oldest (ids grow with time; ADR 0077).
        in_order = sorted(runs.values(), key=lambda run: (-run.priority, run.run_id))
        for run in in_order:
            dispatch = self._dispatch(run.run_id)
            if dispatch.claim is not None:
                served[run.tenant_id] = max(served.get(run.tenant_id, 0), dispatch.claim)
            backing_off = (
                now is not None and dispatch.not_before is not None and dispatch.not_before > now
            )
            if run.status not in active or run.paused_by or backing_off:
                continue
            if run.tenant_id not in slots:
                slots[run.tenant_id] = self._slots(run.tenant_id)
            tenant_slots = slots[run.tenant_id]
            if tenant_slots is None or run.holds_slot or tenant_slots.free(run.deployment_ref):
                by_tenant.setdefault(run.tenant_id, []).append(run.run_id)
        offered = candidates_per_tenant(len(by_tenant))
        candidates = [
            (rank, served.get(tenant, 0), run_id, tenant)
            for tenant, run_ids in by_tenant.items()
            for rank, run_id in enumerate(run_ids[:offered], start=1)
        ]
        if not candidates:
            return None
        _, _, run_id, tenant = min(candidates)
        run = runs[run_id]
        admitting = slots[tenant] is not None and not run.holds_slot
        if not run.holds_slot:
            self._t.put("runs", run_id, attrs.evolve(run, holds_slot=True))
        dispatch = attrs.evolve(self._dispatch(run_id), claim=self._stamp())
        self._t.put("run_dispatch", run_id, dispatch)
        self._claimed_at = None if self._t.undo is None else len(self._t.undo)
        return RunClaim(
            run_id=run_id,
            tenant_id=tenant,
            dispatch_failures=dispatch.failures,
            admitting=admitting,
        )

    def _slots(self, tenant_id: str) -> Slots | None:
        """The tenant's slots now, or None when neither it nor a deployment of it has a limit."""
        deployments = deployment_limits(self._t, tenant_id)
        own = tenant_limits(self._t, tenant_id).max_concurrent_runs
        if own is None and not deployments:
            return None
        held = [r.deployment_ref for r in self._of(tenant_id) if r.holds_slot]
        return Slots(tenant=own, deployments=deployments, held=held)

    def undo_to_claim(self) -> None:
        """Undo the writes logged since the claim."""
        undo = self._t.undo
        mark = self._claimed_at
        if undo is None or mark is None:
            msg = "no claim to go back to"
            raise RuntimeError(msg)
        while len(undo) > mark:
            undo.pop()()

    def record_dispatch_failure(
        self, tenant_id: str, run_id: str, not_before: datetime, *, counted: bool = True
    ) -> int:
        """Count the failure (unless not ``counted``) and back off; stamped as a claim."""
        if self.get(tenant_id, run_id) is None:
            raise missing("run", run_id)
        before = self._dispatch(run_id)
        failures = before.failures + int(counted)
        after = _Dispatch(failures=failures, not_before=not_before, claim=self._stamp())
        self._t.put("run_dispatch", run_id, after)
        return after.failures

    def clear_dispatch_failures(self, tenant_id: str, run_id: str) -> None:
        """Reset the count and the backoff."""
        if self.get(tenant_id, run_id) is not None:
            before = self._dispatch(run_id)
            self._t.put("run_dispatch", run_id, _Dispatch(claim=before.claim))

    @detached
    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        """The run without its JSON payloads."""
        run: Run | None = self._t.table("runs").get(run_id)
        if run is None or run.tenant_id != tenant_id:
            return None
        return attrs.evolve(run, **_PAYLOAD_EMPTY)

    def save_header(self, run: Run) -> None:
        """Replace all but the stored payloads."""
        stored: Run | None = self._t.table("runs").get(run.run_id)
        if stored is None or stored.tenant_id != run.tenant_id:
            raise missing("run", run.run_id)
        kept = {name: getattr(stored, name) for name in _PAYLOAD_KEPT}
        self._t.put("runs", run.run_id, attrs.evolve(run, **kept))

    def pause_deployment_runs(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> int:
        """Add (or remove) the deployment's pause on each of its runs that has not ended."""
        changed = 0
        for run in self._of(tenant_id):
            if run.deployment_ref != deployment_ref or run.status in TERMINAL:
                continue
            after = with_pause(run.paused_by, PauseSource.DEPLOYMENT, paused=paused)
            if after != run.paused_by:  # a paused run gives its slot up (the model sees to it)
                self._t.put("runs", run.run_id, attrs.evolve(run, paused_by=after))
                changed += 1
        return changed

    def lock_due_timers(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """Runs whose timer is due, earliest first (the store lock holds them all)."""
        due = sorted(
            (run.wait_until, run.run_id, run.tenant_id)
            for run in self._t.table("runs").values()
            if run.status is RunStatus.WAITING_TIMER
            and run.wait_until is not None
            and run.wait_until <= now
        )
        return [(tenant_id, run_id) for _, run_id, tenant_id in due[:limit]]

    def earliest_timer(self) -> datetime | None:
        """The earliest due time of a run waiting on a timer."""
        return min(
            (
                run.wait_until
                for run in self._t.table("runs").values()
                if run.status is RunStatus.WAITING_TIMER and run.wait_until is not None
            ),
            default=None,
        )

    @detached
    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal runs last updated before the instant, oldest first."""
        found = [
            run
            for run in self._of(tenant_id)
            if run.status in TTL_ERASABLE
            and run.updated_at < updated_before
            and run.erased_at is None
            and not held(self._t, tenant_id, run.run_id)
            and self._lineage_ended(run)
        ]
        return sorted(found, key=lambda run: (run.updated_at, run.run_id))[:limit]

    def ids_of(self, tenant_id: str) -> list[str]:
        """Every run id of the tenant, oldest first."""
        return sorted(run.run_id for run in self._of(tenant_id))

    def tenants(self) -> list[str]:
        """Every tenant that has runs."""
        return sorted({run.tenant_id for run in self._t.table("runs").values()})
