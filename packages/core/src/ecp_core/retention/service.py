"""Use cases for retention: policies, legal holds, erasure requests, the log, and TTL purge."""

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

import attrs

from ecp_core.audit.erasure import crypto_erase
from ecp_core.constraints import checked
from ecp_core.errors import FieldError, LegalHoldActive, NotFound, ValidationFailed
from ecp_core.identity import ActorIdentity
from ecp_core.ports.retention import RetentionUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.retention.erasure import RunEraser, RunErasure, RunGuard
from ecp_core.retention.model import (
    SYSTEM_TENANT,
    ConfiguredDefaults,
    CreateLegalHoldRequest,
    ErasureRequest,
    ErasureStepStatus,
    LegalHold,
    ResolvedRetentionPolicy,
    RetentionAuditEntry,
    RetentionPolicy,
    RetentionPolicyRequest,
)
from ecp_core.retention.rules import cutoff, held, resolve_policy, run_ttl_eligible
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL

log = logging.getLogger("ecp_core.retention")

PURGE_BATCH = 500


@attrs.frozen(kw_only=True, field_transformer=checked)
class ErasureReport:
    """The result of an erasure request: one entry per run, and the total newly erased."""

    target: str
    """What was erased."""
    newly_erased: int
    """How many items this request erased (already erased ones are not counted)."""
    runs: tuple[RunErasure, ...]
    """What was done for each run."""

    @classmethod
    def of(cls, target: str, runs: Sequence[RunErasure]) -> "ErasureReport":
        """The report over ``runs``; ``newly_erased`` is zero when it repeats an earlier one."""
        return cls(target=target, newly_erased=sum(r.newly_erased for r in runs), runs=tuple(runs))


@attrs.frozen(kw_only=True, field_transformer=checked)
class SweepReport:
    """One purge pass: what each tenant's sweeps did, and which failed."""

    records_tombstoned: int = 0
    runs_erased: int = 0
    failures: tuple[str, ...] = ()


def _ended(run: Run) -> bool:
    return run.status in TERMINAL


def _unchanged_and_expired(seen: Run, limit: datetime) -> RunGuard:
    """The purge's re-check inside the destructive transaction.

    Same tenant, not updated since it was selected, still terminal and past the TTL.
    """

    def guard(run: Run) -> bool:
        return (
            run.tenant_id == seen.tenant_id
            and run.updated_at == seen.updated_at
            and run_ttl_eligible(run.status, run.updated_at, limit)
        )

    return guard


class RetentionService:
    """Policies and holds per tenant, explicit erasure, and the TTL purge."""

    def __init__(
        self,
        uow: Callable[[], RetentionUnit],
        clock: Clock,
        ids: IdFactory,
        eraser: RunEraser,
        configured: ConfiguredDefaults,
    ) -> None:
        """Wire the service; ``configured`` are the SERVICE_RETENTION__DEFAULT_* settings."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._eraser = eraser
        self._configured = configured

    # -- policies ------------------------------------------------------------------------------

    def policy(self, tenant_id: str) -> ResolvedRetentionPolicy:
        """The policy in force for the tenant, with the rule that chose it."""
        with self._uow() as uow:
            own = uow.retention.policy(tenant_id) if tenant_id != SYSTEM_TENANT else None
            system = uow.retention.policy(SYSTEM_TENANT)
        return resolve_policy(tenant_id, own, self._configured, system)

    def put_policy(
        self, tenant_id: str, request: RetentionPolicyRequest
    ) -> ResolvedRetentionPolicy:
        """Store the tenant's own policy row; it wins over every default from now on."""
        row = RetentionPolicy(
            tenant_id=tenant_id,
            audit_ttl_seconds=request.audit_ttl_seconds,
            run_ttl_seconds=request.run_ttl_seconds,
            enabled=request.enabled,
            updated_at=self._clock.now(),
        )
        with self._uow() as uow:
            uow.retention.put_policy(row)
            uow.commit()
        return self.policy(tenant_id)

    # -- legal holds ---------------------------------------------------------------------------

    def place_hold(self, actor: ActorIdentity, request: CreateLegalHoldRequest) -> LegalHold:
        """Place a run-scoped or tenant-wide hold (NotFound for another tenant's run)."""
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            uow.retention.lock_tenant(tenant_id, exclusive=True)
            if request.run_id is not None and uow.runs.get(tenant_id, request.run_id) is None:
                raise NotFound(f"run {request.run_id} not found")
            hold = LegalHold(
                hold_id=self._ids.new_id(),
                tenant_id=tenant_id,
                run_id=request.run_id,
                reason=request.reason,
                created_at=self._clock.now(),
                created_by=actor.subject,
            )
            uow.retention.add_hold(hold)
            uow.commit()
        return hold

    def holds(self, tenant_id: str, *, active_only: bool = False) -> list[LegalHold]:
        """The tenant's holds, released ones included unless ``active_only``."""
        with self._uow() as uow:
            return uow.retention.holds(tenant_id, active_only=active_only)

    def release_hold(self, actor: ActorIdentity, hold_id: str) -> LegalHold:
        """Release a hold (kept in the history); releasing again changes nothing."""
        with self._uow() as uow:
            hold = uow.retention.hold(actor.tenant_id, hold_id)
            if hold is None:
                raise NotFound(f"hold {hold_id} not found")
            if not hold.active:
                return hold
            released = attrs.evolve(hold, released_at=self._clock.now(), released_by=actor.subject)
            uow.retention.save_hold(released)
            uow.commit()
        return released

    # -- erasure -------------------------------------------------------------------------------

    def request_erasure(self, actor: ActorIdentity, request: ErasureRequest) -> ErasureReport:
        """Erase one run or the caller's whole tenant; 409 while a legal hold covers it."""
        if (request.run_id is None) == (request.tenant_id is None):
            raise ValidationFailed(
                "name exactly one of run_id and tenant_id",
                errors=[
                    FieldError(loc=("run_id",), msg="exactly one of run_id and tenant_id"),
                    FieldError(loc=("tenant_id",), msg="exactly one of run_id and tenant_id"),
                ],
            )
        tenant_id = actor.tenant_id
        if request.tenant_id is not None and request.tenant_id != tenant_id:
            raise NotFound(f"tenant {request.tenant_id} not found")
        trigger = f"request:{actor.subject}"
        if request.run_id is not None:
            erased = self._eraser.erase_tree(
                tenant_id, request.run_id, reason=request.reason, trigger=trigger
            )
            return ErasureReport.of(f"run:{request.run_id}", erased)
        with self._uow() as uow:
            if held(uow.retention.holds(tenant_id, active_only=True), tenant_id, None):
                raise LegalHoldActive(f"an active legal hold covers tenant {tenant_id}")
            run_ids = uow.runs.ids_of(tenant_id)
            holds = uow.retention.holds(tenant_id, active_only=True)
        if any(held(holds, tenant_id, run_id) for run_id in run_ids):
            raise LegalHoldActive(f"an active legal hold covers a run of tenant {tenant_id}")
        # Runs that have not ended are left alone and reported with erased false.
        runs = tuple(
            self._eraser.erase(
                tenant_id, run_id, reason=request.reason, trigger=trigger, guard=_ended
            )
            for run_id in run_ids
        )
        return ErasureReport.of(f"tenant:{tenant_id}", runs)

    def log(
        self, tenant_id: str, *, limit: int = 50, before: str | None = None
    ) -> list[RetentionAuditEntry]:
        """The tenant's retention audit log, newest first."""
        with self._uow() as uow:
            return uow.retention.log(tenant_id, limit=limit, before=before)

    # -- purge ---------------------------------------------------------------------------------

    def sweep(self) -> SweepReport:
        """One pass over every tenant's enabled policy: audit TTL, then run TTL.

        A failing sweep is logged and reported; it stops neither the other sweep nor the next
        tenant. Tenants under a tenant-wide hold are skipped; held runs are never touched.
        """
        with self._uow() as uow:
            tenants = sorted(set(uow.runs.tenants()) | set(uow.retention.policy_tenants()))
        report = SweepReport()
        for tenant_id in tenants:
            policy = self.policy(tenant_id)
            if not policy.enabled:
                continue
            for name, sweep in (("audit_ttl", self._sweep_audit), ("run_ttl", self._sweep_runs)):
                try:
                    count = sweep(policy)
                except Exception as exc:
                    log.exception(
                        "retention sweep failed", extra={"sweep": name, "tenant_id": tenant_id}
                    )
                    report = attrs.evolve(
                        report,
                        failures=(*report.failures, f"{tenant_id}:{name}:{type(exc).__name__}"),
                    )
                    continue
                field = "records_tombstoned" if name == "audit_ttl" else "runs_erased"
                report = attrs.evolve(report, **{field: getattr(report, field) + count})
        log.info(
            "purge sweep",
            extra={
                "tenants": len(tenants),
                "records_tombstoned": report.records_tombstoned,
                "runs_erased": report.runs_erased,
                "failures": len(report.failures),
            },
        )
        return report

    def _sweep_audit(self, policy: ResolvedRetentionPolicy) -> int:
        limit = cutoff(self._clock.now(), policy.audit_ttl_seconds)
        if limit is None:
            return 0
        tenant_id, total = policy.tenant_id, 0
        while True:
            with self._uow() as uow:
                uow.retention.lock_tenant(tenant_id, exclusive=False)
                holds = uow.retention.holds(tenant_id, active_only=True)
                if held(holds, tenant_id, None):
                    return total
                batch = uow.audit.aged(tenant_id, limit, PURGE_BATCH)
                now, erased_ids = self._clock.now(), []
                for record in batch:
                    if not held(holds, tenant_id, record.run_id):
                        uow.audit.store_erasure(crypto_erase(record, "audit_ttl", now))
                        erased_ids.append(record.audit_id)
                erased = len(erased_ids)
                if erased:
                    uow.retention.append_log(
                        RetentionAuditEntry(
                            entry_id=self._ids.new_id(),
                            tenant_id=tenant_id,
                            step="audit_ttl_tombstone",
                            status=ErasureStepStatus.DONE,
                            newly_erased=erased,
                            reason="audit_ttl",
                            trigger="purge",
                            occurred_at=now,
                            detail={"created_before": limit.isoformat(), "audit_ids": erased_ids},
                        )
                    )
                uow.commit()
            total += erased
            if erased == 0 or len(batch) < PURGE_BATCH:
                return total

    def _sweep_runs(self, policy: ResolvedRetentionPolicy) -> int:
        limit = cutoff(self._clock.now(), policy.run_ttl_seconds)
        if limit is None:
            return 0
        tenant_id = policy.tenant_id
        with self._uow() as uow:
            holds = uow.retention.holds(tenant_id, active_only=True)
            if held(holds, tenant_id, None):
                return 0
            candidates = [
                run
                for run in uow.runs.expired(tenant_id, limit, PURGE_BATCH)
                if not held(holds, tenant_id, run.run_id, run.ancestor_run_ids)
            ]
        erased = 0
        for candidate in candidates:
            result = self._eraser.erase(
                tenant_id,
                candidate.run_id,
                reason="run_ttl",
                trigger="purge",
                guard=_unchanged_and_expired(candidate, limit),
            )
            erased += int(result.erased and result.newly_erased > 0)
        return erased
