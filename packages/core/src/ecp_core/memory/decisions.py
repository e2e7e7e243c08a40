"""Version decisions in memory: artifacts, schedules, and one version's evidence."""

from datetime import datetime

import attrs

from ecp_core.decisions.model import (
    ALREADY_RETAINED,
    CompareRequest,
    DecisionArtifact,
    DecisionSchedule,
)
from ecp_core.decisions.selection import Selection, VersionWindow, select
from ecp_core.errors import Conflict, exists
from ecp_core.memory.evidence import EXECUTIONS, OUTCOMES, REVISIONS, EvidenceTables
from ecp_core.memory.tables import Repository, detached

DECISIONS = "decisions"
SCHEDULES = "decision_schedules"


class MemoryDecisions(Repository):
    """DecisionRepository in memory: artifacts by id (with their fingerprints), schedules by id."""

    def lock_subject(self, tenant_id: str, request: CompareRequest) -> None:
        """Nothing to do: a memory unit of work holds the whole store."""

    @detached
    def find(
        self, tenant_id: str, request_digest: str, fingerprint: str
    ) -> DecisionArtifact | None:
        """The artifact of this request over this evidence, or None."""
        for artifact, stored_fingerprint in self._t.table(DECISIONS).values():
            if (
                artifact.tenant_id == tenant_id
                and artifact.request_digest == request_digest
                and stored_fingerprint == fingerprint
            ):
                found: DecisionArtifact = artifact
                return found
        return None

    def revisions(self, tenant_id: str, request: CompareRequest) -> int:
        """How many artifacts compare the same workflow, versions and window."""
        return sum(
            (a.tenant_id, a.workflow_id, a.baseline_version, a.candidate_version, a.start, a.end)
            == (
                tenant_id,
                request.workflow_id,
                request.baseline_version,
                request.candidate_version,
                request.start,
                request.end,
            )
            for a, _ in self._t.table(DECISIONS).values()
        )

    def add(self, artifact: DecisionArtifact, fingerprint: str) -> None:
        """Retain a new artifact."""
        if artifact.decision_id in self._t.table(DECISIONS):
            raise exists("decision", artifact.decision_id)
        if self.find(artifact.tenant_id, artifact.request_digest, fingerprint) is not None:
            raise Conflict(ALREADY_RETAINED)
        self._t.put(DECISIONS, artifact.decision_id, (artifact, fingerprint))

    @detached
    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: tuple[datetime, str] | None = None,
        workflow_id: str | None = None,
    ) -> list[DecisionArtifact]:
        """Artifacts newest first by (created_at, decision_id)."""
        found = sorted(
            (
                a
                for a, _ in self._t.table(DECISIONS).values()
                if a.tenant_id == tenant_id and workflow_id in (None, a.workflow_id)
            ),
            key=lambda a: (a.created_at, a.decision_id),
            reverse=True,
        )
        if before is not None:
            found = [a for a in found if (a.created_at, a.decision_id) < before]
        return found[:limit]

    def add_schedule(self, schedule: DecisionSchedule) -> None:
        """Store a new schedule."""
        if schedule.schedule_id in self._t.table(SCHEDULES):
            raise exists("schedule", schedule.schedule_id)
        self._t.put(SCHEDULES, schedule.schedule_id, schedule)

    @detached
    def schedules(self, tenant_id: str) -> list[DecisionSchedule]:
        """The tenant's schedules by (created_at, schedule_id)."""
        return sorted(
            (s for s in self._t.table(SCHEDULES).values() if s.tenant_id == tenant_id),
            key=lambda s: (s.created_at, s.schedule_id),
        )

    @detached
    def due(self, now: datetime, *, limit: int) -> list[DecisionSchedule]:
        """Schedules due at ``now``, oldest occurrence first."""
        return sorted(
            (s for s in self._t.table(SCHEDULES).values() if s.next_run_at <= now),
            key=lambda s: (s.next_run_at, s.schedule_id),
        )[:limit]

    def claim_occurrence(self, schedule_id: str, expected: datetime, following: datetime) -> bool:
        """Move ``next_run_at`` from ``expected`` to ``following`` if it still is ``expected``."""
        found: DecisionSchedule | None = self._t.table(SCHEDULES).get(schedule_id)
        if found is None or found.next_run_at != expected:
            return False
        self._t.put(SCHEDULES, schedule_id, attrs.evolve(found, next_run_at=following))
        return True

    def record_run(
        self, schedule_id: str, at: datetime, decision_id: str | None, error: str | None
    ) -> None:
        """Note an occurrence's result on the schedule."""
        found: DecisionSchedule | None = self._t.table(SCHEDULES).get(schedule_id)
        if found is not None:
            self._t.put(
                SCHEDULES,
                schedule_id,
                attrs.evolve(found, last_run_at=at, last_decision_id=decision_id, last_error=error),
            )


class MemoryVersionEvidence(EvidenceTables):
    """VersionEvidence in memory: :func:`ecp_core.decisions.selection.select` itself."""

    def select(self, tenant_id: str, window: VersionWindow, *, limit: int) -> Selection:
        """The reference selection of one version's evidence (at most ``limit`` executions)."""
        found = select(
            window,
            self.digested(EXECUTIONS, tenant_id),
            self.digested(OUTCOMES, tenant_id),
            self.digested(REVISIONS, tenant_id),
            self.definition(tenant_id, window.workflow_id, window.workflow_version),
        )
        return attrs.evolve(found, executions=found.executions[:limit])
