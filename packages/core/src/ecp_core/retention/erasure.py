"""erase_run: the spec's five steps, each idempotent and written to the retention audit log.

Steps, in order: crypto-erase the run's node audits; delete its checkpoints (the saved state and
the payloads its approvals hold); redact the run row (output, artifacts, metadata, error nulled);
clean artifacts by prefix plus keys found in output snapshots; delete economic events by join
key. Keys and join keys are read before the audit records lose them. The first three steps commit
in one transaction, under the tenant's retention lock and with every guard re-checked.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from ecp_core.audit.erasure import crypto_erase
from ecp_core.audit.record import LEGACY_DIGEST_VERSION, NodeAuditRecord
from ecp_core.constraints import checked
from ecp_core.errors import EcpError, LegalHoldActive, NotFound, RunStillActive
from ecp_core.ports.retention import ArtifactStore, EvidenceEraser, RetentionUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.retention.model import ErasureStepStatus, RetentionAuditEntry
from ecp_core.retention.rules import held
from ecp_core.runs.approvals.model import ApprovalRecord, ApprovalResolution
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL

ARTIFACT_KEY = "artifact_key"
ARTIFACT_KEYS = "artifact_keys"
JOIN_KEY = "join_key"

RunGuard = Callable[[Run], bool]
"""An extra condition a purge re-checks inside the destructive transaction.

A guarded erasure also leaves alone a child run whose parent (or any ancestor) has not ended.
"""

CHILD_PAGE = 500
"""How many child runs one read of a run's children takes while erasing a tree."""


def _lineage_ended(uow: RetentionUnit, run: Run) -> bool:
    """Whether every ancestor of ``run`` that is still stored has ended."""
    ancestors = (uow.runs.get(run.tenant_id, a) for a in run.ancestor_run_ids)
    return all(a.status in TERMINAL for a in ancestors if a is not None)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ErasureStepResult:
    """One step of one erasure."""

    step: str
    """The erasure step."""
    status: ErasureStepStatus
    """How the step ended."""
    newly_erased: int
    """How many items the step erased."""
    detail: dict[str, Any] = attrs.field(factory=dict)
    """What the step did, step by step."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class RunErasure:
    """What erasing one run did; ``erased`` is False when a guard stopped it.

    ``newly_erased`` adds up the steps: zero when the erasure repeats an earlier one.
    """

    run_id: str
    erased: bool
    """Whether the run is erased now."""
    newly_erased: int = 0
    """How many items were erased now."""
    steps: tuple[ErasureStepResult, ...] = ()
    """The erasure steps and how each ended."""

    @classmethod
    def of(cls, run_id: str, steps: Sequence[ErasureStepResult]) -> "RunErasure":
        """A performed erasure with its steps."""
        return cls(
            run_id=run_id,
            erased=True,
            newly_erased=sum(s.newly_erased for s in steps),
            steps=tuple(steps),
        )


def artifact_keys(records: Iterable[NodeAuditRecord]) -> list[str]:
    """Artifact keys named at the top of output snapshots (``artifact_key``, ``artifact_keys``)."""
    keys: list[str] = []
    for record in records:
        output = record.output_snapshot
        if not isinstance(output, dict):
            continue
        single, many = output.get(ARTIFACT_KEY), output.get(ARTIFACT_KEYS)
        keys.extend([single] if isinstance(single, str) else [])
        keys.extend(key for key in (many if isinstance(many, list) else []) if isinstance(key, str))
    return list(dict.fromkeys(keys))


def join_keys(records: Iterable[NodeAuditRecord]) -> list[str]:
    """Top-level ``join_key`` values of the records' execution metadata (never nested keys)."""
    found = (
        record.execution_metadata.get(JOIN_KEY)
        for record in records
        if isinstance(record.execution_metadata, dict)
    )
    return list(dict.fromkeys(key for key in found if isinstance(key, str)))


def _without_payload(resolution: ApprovalResolution) -> ApprovalResolution:
    if resolution.edited_payload is None:
        return resolution
    return attrs.evolve(resolution, edited_payload=None)


def _without_payloads(approval: ApprovalRecord) -> ApprovalRecord:
    resolution = approval.resolution
    return attrs.evolve(
        approval,
        proposed_payload=None,
        context_excerpt={},
        resolution=None if resolution is None else _without_payload(resolution),
        approvals=tuple(_without_payload(given) for given in approval.approvals),
    )


class RunEraser:
    """Erases runs in the spec's order; shared by explicit erasure and the TTL purge."""

    def __init__(
        self,
        uow: Callable[[], RetentionUnit],
        clock: Clock,
        ids: IdFactory,
        artifacts: ArtifactStore,
        evidence: EvidenceEraser | None,
        *,
        econ_erase_enabled: bool,
    ) -> None:
        """Wire the eraser.

        ``econ_erase_enabled`` False logs ``econ_erase_skipped``; True without an eraser fails
        that step (retryable by erasing again).
        """
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._artifacts = artifacts
        self._evidence = evidence
        self._econ_enabled = econ_erase_enabled

    def erase(
        self,
        tenant_id: str,
        run_id: str,
        *,
        reason: str,
        trigger: str,
        guard: RunGuard | None = None,
    ) -> RunErasure:
        """Erase one run.

        Raises NotFound, LegalHoldActive or RunStillActive (explicit erasure); with a ``guard``
        (purge) a run that no longer qualifies is left alone instead.
        """
        with self._uow() as uow:
            uow.retention.lock_tenant(tenant_id, exclusive=False)
            run = uow.runs.lock(tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            refusal = self._refusal(uow, run)
            unqualified = guard is not None and not (guard(run) and _lineage_ended(uow, run))
            if refusal is not None or unqualified:
                if guard is None and refusal is not None:
                    raise refusal
                return RunErasure(run_id=run_id, erased=False)
            records = uow.audit.for_run(tenant_id, run_id)
            keys, joins = artifact_keys(records), join_keys(records)
            steps = [
                self._erase_audits(uow, records, reason),
                self._delete_checkpoints(uow, run),
                self._redact_run(uow, run_id, tenant_id),
            ]
            self._log(
                uow, tenant_id=tenant_id, run_id=run_id, steps=steps, reason=reason, trigger=trigger
            )
            uow.commit()
        later = [
            self._clean_artifacts(tenant_id, run_id, keys),
            self._erase_evidence(tenant_id, run_id, joins),
        ]
        with self._uow() as uow:
            self._log(
                uow, tenant_id=tenant_id, run_id=run_id, steps=later, reason=reason, trigger=trigger
            )
            uow.commit()
        return RunErasure.of(run_id, [*steps, *later])

    def erase_tree(
        self, tenant_id: str, run_id: str, *, reason: str, trigger: str
    ) -> list[RunErasure]:
        """Erase a run and, after it, its descendants (child runs, theirs, ...), each logged.

        Every run of the tree is checked first, so a hold or an active run anywhere in it
        refuses the whole request (LegalHoldActive, RunStillActive) before anything is erased.
        Each erasure re-checks under the tenant's lock; repeating the request erases nothing new.
        """
        tree = self._tree(tenant_id, run_id)
        with self._uow() as uow:
            for member in tree:
                refusal = self._refusal(uow, member)
                if refusal is not None:
                    raise refusal
        return [
            self.erase(tenant_id, member.run_id, reason=reason, trigger=trigger) for member in tree
        ]

    def _tree(self, tenant_id: str, run_id: str) -> list[Run]:
        """The run, then its descendants breadth first (NotFound when the run is not there)."""
        with self._uow() as uow:
            root = uow.runs.get(tenant_id, run_id)
            if root is None:
                raise NotFound(f"run {run_id} not found")
            tree, index = [root], 0
            while index < len(tree):
                after: str | None = None
                while True:
                    page = uow.runs.children(
                        tenant_id, tree[index].run_id, limit=CHILD_PAGE, after=after
                    )
                    tree.extend(page)
                    if len(page) < CHILD_PAGE:
                        break
                    after = page[-1].run_id
                index += 1
        return tree

    @staticmethod
    def _refusal(uow: RetentionUnit, run: Run) -> EcpError | None:
        holds = uow.retention.holds(run.tenant_id, active_only=True)
        if held(holds, run.tenant_id, run.run_id, run.ancestor_run_ids):
            return LegalHoldActive(f"an active legal hold covers run {run.run_id}")
        if run.status not in TERMINAL:
            return RunStillActive(f"run {run.run_id} is {run.public_status.value}")
        return None

    def _erase_audits(
        self, uow: RetentionUnit, records: Sequence[NodeAuditRecord], reason: str
    ) -> ErasureStepResult:
        now, legacy = self._clock.now(), 0
        erased_ids: list[str] = []
        for record in records:
            if record.digest_version == LEGACY_DIGEST_VERSION:
                legacy += 1
                continue
            erased = crypto_erase(record, reason, now)
            if erased is not record:
                uow.audit.store_erasure(erased)
                erased_ids.append(record.audit_id)
        # The records stay (and their log leaves): the entry names which lost their data.
        detail: dict[str, Any] = {"audit_ids": erased_ids} if erased_ids else {}
        if legacy:
            detail["legacy_records_kept"] = legacy
        return ErasureStepResult(
            step="crypto_erase_audits",
            status=ErasureStepStatus.DONE,
            newly_erased=len(erased_ids),
            detail=detail,
        )

    @staticmethod
    def _delete_checkpoints(uow: RetentionUnit, run: Run) -> ErasureStepResult:
        newly = 0
        cleared = attrs.evolve(run, state={}, paused=None, approved_action=None)
        if cleared != run:
            uow.runs.save(cleared)
            newly += 1
        for approval in uow.approvals.for_run(run.tenant_id, run.run_id):
            emptied = _without_payloads(approval)
            if emptied != approval:
                uow.approvals.save(emptied)
                newly += 1
        newly += uow.tasks.erase_run(run.tenant_id, run.run_id)
        return ErasureStepResult(
            step="delete_checkpoints", status=ErasureStepStatus.DONE, newly_erased=newly
        )

    def _redact_run(self, uow: RetentionUnit, run_id: str, tenant_id: str) -> ErasureStepResult:
        run = uow.runs.get(tenant_id, run_id)
        assert run is not None  # noqa: S101 - locked above
        failure = (
            None if run.failure_state is None else attrs.evolve(run.failure_state, message=None)
        )
        redacted = attrs.evolve(
            run, output=None, artifacts=None, metadata=None, error=None, failure_state=failure
        )
        changed = redacted != run
        if changed or run.erased_at is None:
            uow.runs.save(attrs.evolve(redacted, erased_at=run.erased_at or self._clock.now()))
        return ErasureStepResult(
            step="redact_run", status=ErasureStepStatus.DONE, newly_erased=int(changed)
        )

    def _clean_artifacts(self, tenant_id: str, run_id: str, keys: list[str]) -> ErasureStepResult:
        removed = self._artifacts.delete_prefix(f"{tenant_id}/{run_id}/") + self._artifacts.delete(
            keys
        )
        return ErasureStepResult(
            step="clean_artifacts",
            status=ErasureStepStatus.DONE,
            newly_erased=removed,
            detail={"keys_from_snapshots": len(keys)},
        )

    def _erase_evidence(self, tenant_id: str, run_id: str, joins: list[str]) -> ErasureStepResult:
        if not self._econ_enabled:
            return ErasureStepResult(
                step="econ_erase_skipped", status=ErasureStepStatus.SKIPPED, newly_erased=0
            )
        if self._evidence is None:
            return ErasureStepResult(
                step="delete_economic_events",
                status=ErasureStepStatus.FAILED,
                newly_erased=0,
                detail={"error": "economic evidence store not configured; erase again once it is"},
            )
        try:
            removed = self._evidence.erase_join_keys(tenant_id, run_id, joins)
        except Exception as exc:  # noqa: BLE001 - any failure of the store leaves a retryable step
            return ErasureStepResult(
                step="delete_economic_events",
                status=ErasureStepStatus.FAILED,
                newly_erased=0,
                detail={
                    "error": f"economic evidence store unavailable ({type(exc).__name__}); "
                    "erase again once it is"
                },
            )
        return ErasureStepResult(
            step="delete_economic_events",
            status=ErasureStepStatus.DONE,
            newly_erased=removed,
            detail={"join_keys": len(joins)},
        )

    def _log(
        self,
        uow: RetentionUnit,
        *,
        tenant_id: str,
        run_id: str,
        steps: Iterable[ErasureStepResult],
        reason: str,
        trigger: str,
    ) -> None:
        for step in steps:
            uow.retention.append_log(
                RetentionAuditEntry(
                    entry_id=self._ids.new_id(),
                    tenant_id=tenant_id,
                    run_id=run_id,
                    step=step.step,
                    status=step.status,
                    newly_erased=step.newly_erased,
                    reason=reason,
                    trigger=trigger,
                    occurred_at=self._clock.now(),
                    detail=step.detail,
                )
            )
