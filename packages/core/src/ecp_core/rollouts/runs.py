"""A new run of a deployment under an active rollout takes its arm's graph version (ADR 0089)."""

import logging
from datetime import datetime

from ecp_core.deployments.model import Deployment
from ecp_core.ports.rollouts import WithRollouts
from ecp_core.rollouts.assignment import arm_of
from ecp_core.rollouts.model import Assignment, RolloutUnit

log = logging.getLogger("ecp_core.rollouts")


def assign_run(
    uow: WithRollouts, deployment: Deployment, run_id: str, subject: str, now: datetime
) -> tuple[str, int, str] | None:
    """The (rollout id, arm, graph version ref) of a new run, recorded; None without a rollout.

    The unit is the run id for a rollout by run, or the run's subject (its thread id, given by
    the start or else the run id) for a rollout by subject.
    """
    rollout = uow.rollouts.active(deployment.tenant_id, deployment.deployment_ref)
    if rollout is None:
        return None
    unit = run_id if rollout.unit is RolloutUnit.RUN else subject
    arm = arm_of(rollout.arms, rollout.key, unit)
    recorded = uow.rollouts.assign(
        Assignment(
            tenant_id=rollout.tenant_id,
            rollout_id=rollout.rollout_id,
            period=rollout.period,
            unit_id=unit,
            arm=arm.index,
            assigned_at=now,
        )
    )
    chosen = rollout.arms[recorded.arm]
    log.info(
        "rollout_assigned tenant=%s rollout=%s run=%s arm=%s",
        rollout.tenant_id,
        rollout.rollout_id,
        run_id,
        chosen.index,
    )
    return rollout.rollout_id, chosen.index, chosen.graph_version_ref


__all__ = ["assign_run"]
