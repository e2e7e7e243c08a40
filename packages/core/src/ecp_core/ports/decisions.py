"""The decision port: artifacts and schedules, and its read of one version's evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.billing import WithSubscriptions
from ecp_core.ports.entitlements import WithMeters
from ecp_core.ports.rollouts import WithRollouts
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.decisions.model import CompareRequest, DecisionArtifact, DecisionSchedule
    from ecp_core.decisions.selection import Selection, VersionWindow
    from ecp_core.evidence.model import Digested, SourceInventory


class DecisionRepository(Protocol):
    """Retained decision artifacts and decision schedules."""

    def lock_subject(self, tenant_id: str, request: CompareRequest) -> None:
        """Serialize comparisons of one subject (workflow, versions, window) until commit.

        Identical comparisons then find each other, and revisions are numbered without repeats.
        """
        ...

    def find(
        self, tenant_id: str, request_digest: str, fingerprint: str
    ) -> DecisionArtifact | None:
        """The artifact of this request over this evidence, or None."""
        ...

    def revisions(self, tenant_id: str, request: CompareRequest) -> int:
        """How many artifacts compare the same workflow, versions and window."""
        ...

    def add(self, artifact: DecisionArtifact, fingerprint: str) -> None:
        """Retain a new artifact."""
        ...

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: tuple[datetime, str] | None = None,
        workflow_id: str | None = None,
    ) -> list[DecisionArtifact]:
        """Artifacts newest first by (created_at, decision_id), before that pair when given."""
        ...

    def add_schedule(self, schedule: DecisionSchedule) -> None:
        """Store a new schedule."""
        ...

    def schedules(self, tenant_id: str) -> list[DecisionSchedule]:
        """The tenant's schedules by (created_at, schedule_id)."""
        ...

    def due(self, now: datetime, *, limit: int) -> list[DecisionSchedule]:
        """Schedules of every tenant whose ``next_run_at`` is not after ``now``, oldest first."""
        ...

    def claim_occurrence(self, schedule_id: str, expected: datetime, following: datetime) -> bool:
        """Move ``next_run_at`` from ``expected`` to ``following``; False if it had moved."""
        ...

    def record_run(
        self, schedule_id: str, at: datetime, decision_id: str | None, error: str | None
    ) -> None:
        """Note an occurrence's result on the schedule."""
        ...


class VersionEvidence(Protocol):
    """Decisions' reads of evidence: one version's selection and stored inventories."""

    def select(self, tenant_id: str, window: VersionWindow, *, limit: int) -> Selection:
        """One version's evidence as ``decisions.selection.select`` defines it (capped).

        At most ``limit`` execution events are returned.
        """
        ...

    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        ...


class DecisionsUnit(Transaction, WithMeters, WithSubscriptions, WithRollouts, Protocol):
    """What version decisions need: artifacts, schedules, the versions' evidence, the meters."""

    @property
    def decisions(self) -> DecisionRepository:
        """The retained artifacts and schedules."""
        ...

    @property
    def evidence(self) -> VersionEvidence:
        """Evidence, as decisions read it."""
        ...


__all__ = ["DecisionRepository", "DecisionsUnit", "VersionEvidence"]
