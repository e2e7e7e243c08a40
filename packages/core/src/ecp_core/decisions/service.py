"""Use cases for version decisions: compare, retained history, schedules."""

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from ecp_core.canonical import canonical_json
from ecp_core.decisions import randomized
from ecp_core.decisions.model import (
    CLAIM_CLASS,
    INPUTS_VERSION,
    METHOD_VERSION,
    RANDOMIZED_CLAIM_CLASS,
    SOURCE_BINDING,
    SOURCE_TAGS,
    CalculationInputs,
    CompareRequest,
    CreateScheduleRequest,
    DecisionArtifact,
    DecisionSchedule,
    OutcomeSemantics,
    SourceEvidence,
    SourceEvidenceCounts,
)
from ecp_core.decisions.randomized import RolloutScope, checked_rollout, rollout_scope
from ecp_core.decisions.selection import SideEconomics, VersionWindow, calculation_rows, economics
from ecp_core.decisions.verdict import STANDING_LIMITATIONS, abstain_reasons, constraints, decide
from ecp_core.entitlements.model import Meter
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import (
    EcpError,
    EvidenceWindowTooLarge,
    FieldError,
    QuotaExhausted,
    SubscriptionInactive,
    ValidationFailed,
)
from ecp_core.evidence.model import Digested, SourceInventory
from ecp_core.identity import ActorIdentity, system_actor
from ecp_core.pages import decode_cursor, encode_cursor
from ecp_core.ports.decisions import DecisionsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.wire import digest_form

log = logging.getLogger("ecp_core.decisions")

MAX_DECISION_EVENTS = 50_000
"""Execution events one comparison may select per version."""

HISTORY_CURSOR = "decisions"


def request_digest(request: CompareRequest) -> str:
    """``sha256:`` over the request's canonical JSON; without a rollout, as before one existed.

    A request that names no rollout digests without the field, so the digests of requests
    retained before rollouts stay the same.
    """
    form = digest_form(request)
    if form.get("rollout_id") is None:
        del form["rollout_id"]
    return "sha256:" + hashlib.sha256(canonical_json(form)).hexdigest()


def _fingerprint(baseline: SideEconomics, candidate: SideEconomics) -> str:
    material = {
        "binding": SOURCE_BINDING,
        "tags": list(SOURCE_TAGS),
        "baseline": baseline.material,
        "candidate": candidate.material,
    }
    return "sha256:" + hashlib.sha256(canonical_json(material)).hexdigest()


class DecisionService:
    """Compares versions into immutable, revisioned decision artifacts; runs schedules."""

    def __init__(
        self,
        uow: Callable[[], DecisionsUnit],
        clock: Clock,
        ids: IdFactory,
        entitlements: Entitlements | None = None,
    ) -> None:
        """Wire the service; ``entitlements`` meters scans and schedules (None: no quotas)."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._entitlements = entitlements

    @staticmethod
    def _inventory(
        uow: DecisionsUnit, tenant_id: str, event_id: str | None, field: str
    ) -> Digested[SourceInventory] | None:
        if event_id is None:
            return None
        found = uow.evidence.inventory(tenant_id, event_id)
        if found is None:
            raise ValidationFailed(
                "unknown source inventory",
                errors=[FieldError(loc=(field,), msg=f"no source inventory {event_id}")],
            )
        return found

    @staticmethod
    def _side(
        uow: DecisionsUnit,
        tenant_id: str,
        request: CompareRequest,
        version: str,
        *,
        inventory: Digested[SourceInventory] | None,
        as_of: datetime,
        scope: RolloutScope | None = None,
    ) -> tuple[SideEconomics, frozenset[str]]:
        if inventory is not None and inventory.item.workflow_version != version:
            field = (
                "baseline_inventory_id"
                if version == request.baseline_version
                else "candidate_inventory_id"
            )
            raise ValidationFailed(
                "the inventory is of another version",
                errors=[FieldError(loc=(field,), msg=f"must be an inventory of version {version}")],
            )
        window = VersionWindow(
            workflow_id=request.workflow_id,
            workflow_version=version,
            start=inventory.item.capture_start if inventory else request.start,
            end=inventory.item.capture_end if inventory else request.end,
            end_inclusive=inventory is not None,
        )
        selection = uow.evidence.select(tenant_id, window, limit=MAX_DECISION_EVENTS + 1)
        if len(selection.executions) > MAX_DECISION_EVENTS:
            raise EvidenceWindowTooLarge(
                f"version {version} has more than {MAX_DECISION_EVENTS:,} execution events in "
                "the window; narrow it",
                errors=[FieldError(loc=("start",), msg="window too large")],
            )
        moved: frozenset[str] = frozenset()  # units a weight change moved between arms
        if scope is not None:
            arm = scope.baseline_arm if version == request.baseline_version else scope.candidate_arm
            selection, moved = randomized.restrict(uow, scope, selection, arm)
        return economics(selection, as_of, inventory), moved

    def compare(
        self, actor: ActorIdentity, request: CompareRequest, *, schedule_id: str | None = None
    ) -> tuple[DecisionArtifact, bool]:
        """Compare two versions; ``(artifact, created)``.

        The same request over the same selected evidence returns the retained artifact;
        anything else is a new revision of the comparison.
        """
        if request.end <= request.start:
            raise ValidationFailed(
                "the window is empty", errors=[FieldError(loc=("end",), msg="must be after start")]
            )
        tenant = actor.tenant_id
        as_of = self._clock.now()
        digest = request_digest(request)
        with self._uow() as uow:
            if self._entitlements is not None:
                self._entitlements.current(uow, tenant)  # 402 before any work
            uow.decisions.lock_subject(tenant, request)
            scope = rollout_scope(uow, tenant, request)
            inventories = (
                self._inventory(
                    uow, tenant, request.baseline_inventory_id, "baseline_inventory_id"
                ),
                self._inventory(
                    uow, tenant, request.candidate_inventory_id, "candidate_inventory_id"
                ),
            )
            base, base_moved = self._side(
                uow,
                tenant,
                request,
                request.baseline_version,
                inventory=inventories[0],
                as_of=as_of,
                scope=scope,
            )
            cand, cand_moved = self._side(
                uow,
                tenant,
                request,
                request.candidate_version,
                inventory=inventories[1],
                as_of=as_of,
                scope=scope,
            )
            fingerprint = _fingerprint(base, cand)
            found = uow.decisions.find(tenant, digest, fingerprint)
            if found is not None:
                return found, False  # the retained decision: no scan taken (ADR 0033)
            if self._entitlements is not None:
                self._entitlements.reserve(uow, tenant, {Meter.DECISION_SCANS: 1})
            definitions = (
                base.material["definition"],
                cand.material["definition"],
            )
            reasons = abstain_reasons(
                request.policy,
                base,
                cand,
                (_text(definitions[0]), _text(definitions[1])),
                (inventories[0] is not None, inventories[1] is not None),
            )
            standing: tuple[str, ...] = STANDING_LIMITATIONS
            if scope is not None:
                reasons += randomized.abstain_reasons(scope)
                standing = (
                    *randomized.RANDOMIZED_LIMITATIONS,
                    *randomized.limitations(scope, len(base_moved | cand_moved)),
                )
            outcome = decide(reasons, constraints(request.policy, base, cand))
            problems = [*base.inventory_problems, *cand.inventory_problems]
            artifact = DecisionArtifact(
                decision_id=self._ids.new_id(),
                revision=uow.decisions.revisions(tenant, request) + 1,
                tenant_id=tenant,
                workflow_id=request.workflow_id,
                baseline_version=request.baseline_version,
                candidate_version=request.candidate_version,
                start=request.start,
                end=request.end,
                verdict=outcome.verdict,
                recommended_action=outcome.action,
                claim_class=CLAIM_CLASS if scope is None else RANDOMIZED_CLAIM_CLASS,
                method_version=METHOD_VERSION,
                abstain_reasons=outcome.abstain_reasons,
                limitations=(*standing, *problems),
                constraints=outcome.constraints,
                additional_runs_required=outcome.additional_runs_required,
                source_evidence=SourceEvidence(
                    binding=SOURCE_BINDING, tags=SOURCE_TAGS, fingerprint=fingerprint
                ),
                source_delivery=SourceEvidenceCounts(
                    baseline=base.delivery, candidate=cand.delivery
                ),
                outcome_semantics=OutcomeSemantics(
                    baseline=_text(definitions[0]), candidate=_text(definitions[1])
                ),
                calculation_inputs=CalculationInputs(
                    version=INPUTS_VERSION,
                    baseline=calculation_rows(base.runs),
                    candidate=calculation_rows(cand.runs),
                ),
                policy=request.policy,
                request_digest=digest,
                as_of=as_of,
                created_at=as_of,
                requested_by=actor.subject,
                schedule_id=schedule_id,
                rollout_id=request.rollout_id,
                rollout_recommendation=(
                    None if scope is None else randomized.recommendation(outcome.verdict)
                ),
            )
            uow.decisions.add(artifact, fingerprint)
            uow.commit()
        return artifact, True

    def history(
        self,
        tenant_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        workflow_id: str | None = None,
    ) -> tuple[list[DecisionArtifact], str | None]:
        """Retained decisions, newest first, and the cursor of the next page."""
        after = None
        if cursor is not None:
            moment, decision_id = decode_cursor(HISTORY_CURSOR, cursor, 2)
            after = (datetime.fromisoformat(moment), decision_id)
        with self._uow() as uow:
            page = uow.decisions.page(
                tenant_id, limit=limit + 1, before=after, workflow_id=workflow_id
            )
        found = page[:limit]
        more = len(page) > limit
        next_cursor = (
            encode_cursor(HISTORY_CURSOR, found[-1].created_at.isoformat(), found[-1].decision_id)
            if more and found
            else None
        )
        return found, next_cursor

    def create_schedule(
        self, actor: ActorIdentity, request: CreateScheduleRequest
    ) -> DecisionSchedule:
        """Store a recurring comparison; its first occurrence is due at once."""
        now = self._clock.now()
        schedule = DecisionSchedule(
            schedule_id=self._ids.new_id(),
            tenant_id=actor.tenant_id,
            workflow_id=request.workflow_id,
            baseline_version=request.baseline_version,
            candidate_version=request.candidate_version,
            interval_seconds=request.interval_seconds,
            window_seconds=request.window_seconds,
            policy=request.policy,
            name=request.name,
            rollout_id=request.rollout_id,
            created_at=now,
            created_by=actor.subject,
            next_run_at=now,
        )
        with self._uow() as uow:
            checked_rollout(
                uow, actor.tenant_id, _occurrence(request, now)
            )  # 422 unless comparable
            if self._entitlements is not None:
                self._entitlements.admit_schedule(
                    uow,
                    actor.tenant_id,
                    request.interval_seconds,
                    lambda: len(uow.decisions.schedules(actor.tenant_id)),
                )
            uow.decisions.add_schedule(schedule)
            uow.commit()
        return schedule

    def schedules(self, tenant_id: str) -> list[DecisionSchedule]:
        """The tenant's schedules, oldest first."""
        with self._uow() as uow:
            return uow.decisions.schedules(tenant_id)

    def run_due(self, *, limit: int = 10) -> list[str]:
        """Claim and run due occurrences; return the ids of the schedules run here.

        A claim moves ``next_run_at`` forward only if it still holds the value read (a
        conditional update), so two processes never run the same occurrence.
        """
        now = self._clock.now()
        with self._uow() as uow:
            due = uow.decisions.due(now, limit=limit)
        ran = []
        for schedule in due:
            following = schedule.next_run_at + timedelta(seconds=schedule.interval_seconds)
            if following <= now:  # missed occurrences are not replayed one by one
                following = now + timedelta(seconds=schedule.interval_seconds)
            with self._uow() as uow:
                claimed = uow.decisions.claim_occurrence(
                    schedule.schedule_id, schedule.next_run_at, following
                )
                uow.commit()
            if not claimed:
                continue
            ran.append(schedule.schedule_id)
            self._run(schedule, now)
        return ran

    def _run(self, schedule: DecisionSchedule, now: datetime) -> None:
        request = _occurrence(schedule, now)
        actor = system_actor(schedule.tenant_id, subject=f"schedule:{schedule.schedule_id}")
        decision_id, error = None, None
        try:
            artifact, _ = self.compare(actor, request, schedule_id=schedule.schedule_id)
            decision_id = artifact.decision_id
        except (SubscriptionInactive, QuotaExhausted) as exc:  # refused, not failed
            error = f"refused ({exc.code}): {exc.detail}"
        except EcpError as exc:  # recorded on the schedule; the next occurrence tries again
            error = exc.detail
        with self._uow() as uow:
            uow.decisions.record_run(schedule.schedule_id, now, decision_id, error)
            uow.commit()
        log.info(
            "schedule fired",
            extra={
                "tenant_id": schedule.tenant_id,
                "schedule_id": schedule.schedule_id,
                "decision_id": decision_id,
                "error": error,
            },
        )


def _occurrence(
    schedule: CreateScheduleRequest | DecisionSchedule, now: datetime
) -> CompareRequest:
    """The comparison a schedule makes at ``now``: its trailing window up to ``now``."""
    return CompareRequest(
        workflow_id=schedule.workflow_id,
        baseline_version=schedule.baseline_version,
        candidate_version=schedule.candidate_version,
        start=now - timedelta(seconds=schedule.window_seconds),
        end=now,
        policy=schedule.policy,
        rollout_id=schedule.rollout_id,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
