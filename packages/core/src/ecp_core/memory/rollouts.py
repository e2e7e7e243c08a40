"""RolloutRepository in memory."""

from collections.abc import Collection
from datetime import datetime

from ecp_core.errors import Conflict, exists
from ecp_core.memory.tables import Repository, detached
from ecp_core.rollouts.model import Assignment, Rollout, RolloutStatus

ROLLOUTS = "rollouts"
ASSIGNMENTS = "rollout_assignments"


class MemoryRollouts(Repository):
    """Rollouts keyed by (tenant, id); assignments by (tenant, rollout, period, unit)."""

    def add(self, rollout: Rollout) -> None:
        """Store a new rollout; Conflict when its deployment has an active one."""
        key = (rollout.tenant_id, rollout.rollout_id)
        if key in self._t.table(ROLLOUTS):
            raise exists("rollout", rollout.rollout_id)
        if self.active(rollout.tenant_id, rollout.deployment_ref) is not None:
            msg = f"deployment {rollout.deployment_ref!r} has an active rollout"
            raise Conflict(msg)
        self._t.put(ROLLOUTS, key, rollout)

    @detached
    def get(self, tenant_id: str, rollout_id: str) -> Rollout | None:
        """One rollout, or None."""
        found: Rollout | None = self._t.table(ROLLOUTS).get((tenant_id, rollout_id))
        return found

    @detached
    def active(self, tenant_id: str, deployment_ref: str) -> Rollout | None:
        """The deployment's active rollout, or None."""
        return next(
            (
                r
                for (t, _), r in self._t.table(ROLLOUTS).items()
                if t == tenant_id
                and r.deployment_ref == deployment_ref
                and r.status is RolloutStatus.ACTIVE
            ),
            None,
        )

    def replace(self, rollout: Rollout) -> None:
        """Store the rollout as given."""
        self._t.put(ROLLOUTS, (rollout.tenant_id, rollout.rollout_id), rollout)

    @detached
    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Rollout]:
        """The tenant's rollouts by id, after ``after``."""
        found = sorted(
            (
                r
                for (t, rid), r in self._t.table(ROLLOUTS).items()
                if t == tenant_id and (after is None or rid > after)
            ),
            key=lambda r: r.rollout_id,
        )
        return found[:limit]

    def assign(self, assignment: Assignment) -> Assignment:
        """Record the first assignment of the unit in its period; the recorded one."""
        a = assignment
        key = (a.tenant_id, a.rollout_id, a.period, a.unit_id)
        found: Assignment | None = self._t.table(ASSIGNMENTS).get(key)
        if found is not None:
            return found
        self._t.put(ASSIGNMENTS, key, assignment)
        return assignment

    @detached
    def assignments(
        self, tenant_id: str, rollout_id: str, period: int
    ) -> list[tuple[int, datetime]]:
        """The (arm, assigned_at) of the period's assignments, oldest first."""
        found = [
            (a.arm, a.assigned_at)
            for (t, r, p, _), a in self._t.table(ASSIGNMENTS).items()
            if (t, r, p) == (tenant_id, rollout_id, period)
        ]
        return sorted(found, key=lambda pair: pair[1])

    def unit_arms(
        self, tenant_id: str, rollout_id: str, unit_ids: Collection[str]
    ) -> dict[str, frozenset[int]]:
        """The arms each of ``unit_ids`` was assigned in any period (units never assigned: none)."""
        wanted = set(unit_ids)
        arms: dict[str, set[int]] = {}
        for (t, r, _, unit), a in self._t.table(ASSIGNMENTS).items():
            if (t, r) == (tenant_id, rollout_id) and unit in wanted:
                arms.setdefault(unit, set()).add(a.arm)
        return {unit: frozenset(found) for unit, found in arms.items()}


__all__ = ["MemoryRollouts"]
