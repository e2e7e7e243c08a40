"""Storage port of the rollouts area: rollouts and their units' assignments (ADR 0089)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Collection
    from datetime import datetime

    from ecp_core.rollouts.model import Assignment, Rollout


class RolloutRepository(Protocol):
    """Rollouts per tenant, at most one active per deployment, and their assignments."""

    def add(self, rollout: Rollout) -> None:
        """Store a new rollout; Conflict when its deployment has an active one."""
        ...

    def get(self, tenant_id: str, rollout_id: str) -> Rollout | None:
        """One rollout, or None."""
        ...

    def active(self, tenant_id: str, deployment_ref: str) -> Rollout | None:
        """The deployment's active rollout, or None."""
        ...

    def replace(self, rollout: Rollout) -> None:
        """Store the rollout's new arms, period, status and promotion (same id)."""
        ...

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Rollout]:
        """Up to ``limit`` rollouts by id (code point order), after ``after`` when given."""
        ...

    def assign(self, assignment: Assignment) -> Assignment:
        """Record the unit's assignment in its period unless one is recorded; the recorded one."""
        ...

    def assignments(
        self, tenant_id: str, rollout_id: str, period: int
    ) -> list[tuple[int, datetime]]:
        """The (arm, assigned_at) of every assignment of the rollout's period, oldest first."""
        ...

    def unit_arms(
        self, tenant_id: str, rollout_id: str, unit_ids: Collection[str]
    ) -> dict[str, frozenset[int]]:
        """The arms each of ``unit_ids`` was assigned in any period (units never assigned: none)."""
        ...


class WithRollouts(Protocol):
    """A unit of work that reaches the rollouts."""

    @property
    def rollouts(self) -> RolloutRepository:
        """The rollouts."""
        ...


class RolloutsUnit(Transaction, WithGraphs, WithDeployments, WithRollouts, Protocol):
    """What the rollout use cases need of storage."""


__all__ = ["RolloutRepository", "RolloutsUnit", "WithRollouts"]
