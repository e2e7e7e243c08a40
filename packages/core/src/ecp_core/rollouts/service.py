"""Use cases for rollouts: create, read, list, assign, change weights, end, verify (ADR 0089)."""

import logging
import secrets
from collections.abc import Callable, Sequence

import attrs

from ecp_core.errors import Conflict, FieldError, NotFound, ValidationFailed
from ecp_core.pages import check_limit, decode_cursor, next_page
from ecp_core.ports.rollouts import RolloutsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.rollouts.assignment import arm_of, first_buckets, rebalanced
from ecp_core.rollouts.model import (
    Arm,
    ArmRequest,
    Assignment,
    AssignResponse,
    CreateRolloutRequest,
    Rollout,
    RolloutStatus,
    UpdateRolloutRequest,
    VerifyResponse,
)
from ecp_core.rollouts.verification import verify

MAX_GRAPH_VERSION = 2**31 - 1
"""The largest graph version storage holds; a larger one names nothing."""

log = logging.getLogger("ecp_core.rollouts")


def _invalid(detail: str, loc: tuple[str | int, ...], msg: str) -> ValidationFailed:
    return ValidationFailed(detail, errors=[FieldError(loc=loc, msg=msg)])


def new_rollout_key() -> str:
    """A fresh secret assignment key: 32 random bytes as hex."""
    return secrets.token_hex(32)


def _check_weights(arms: Sequence[ArmRequest]) -> None:
    total = sum(arm.weight for arm in arms)
    if total != 100:  # noqa: PLR2004
        raise _invalid("the weights must sum to 100", ("arms",), f"weights sum to {total}")


def _graph_version(uow: RolloutsUnit, tenant_id: str, ref: str) -> tuple[str, int] | None:
    """The (graph_id, version) of a stored graph version ``ref``, or None."""
    graph_id, _, text = ref.rpartition("@")
    version = int(text)
    if version > MAX_GRAPH_VERSION or uow.graphs.get(tenant_id, graph_id, version) is None:
        return None
    return graph_id, version


class RolloutService:
    """Rollouts of a deployment's graph versions and the assignment of units to their arms."""

    def __init__(
        self,
        uow: Callable[[], RolloutsUnit],
        clock: Clock,
        ids: IdFactory,
        new_key: Callable[[], str] = new_rollout_key,
    ) -> None:
        """Use cases over ``uow``; ``new_key`` makes each rollout's secret assignment key."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._new_key = new_key

    def create(self, tenant_id: str, request: CreateRolloutRequest) -> Rollout:
        """Start a rollout of the deployment over the arms; Conflict when one is active."""
        _check_weights(request.arms)
        refs = [arm.graph_version_ref for arm in request.arms]
        if len(set(refs)) != len(refs):
            raise _invalid("an arm repeats a graph version", ("arms",), "must not repeat")
        now = self._clock.now()
        with self._uow() as uow:
            if uow.deployments.get(tenant_id, request.deployment_ref) is None:
                raise NotFound(f"deployment {request.deployment_ref!r} not found")
            for i, ref in enumerate(refs):
                if _graph_version(uow, tenant_id, ref) is None:
                    loc = ("arms", i, "graph_version_ref")
                    raise _invalid("an arm names no graph version", loc, f"{ref} not found")
            buckets = first_buckets([arm.weight for arm in request.arms])
            rollout = Rollout(
                tenant_id=tenant_id,
                rollout_id=self._ids.new_id(),
                deployment_ref=request.deployment_ref,
                unit=request.unit,
                arms=tuple(
                    Arm(index=i, graph_version_ref=a.graph_version_ref, weight=a.weight, buckets=b)
                    for i, (a, b) in enumerate(zip(request.arms, buckets, strict=True))
                ),
                status=RolloutStatus.ACTIVE,
                key=self._new_key(),
                created_at=now,
                updated_at=now,
            )
            uow.rollouts.add(rollout)
            uow.commit()
        log.info(
            "rollout_created tenant=%s rollout=%s deployment=%s",
            tenant_id,
            rollout.rollout_id,
            rollout.deployment_ref,
        )
        return rollout

    def get(self, tenant_id: str, rollout_id: str) -> Rollout:
        """One rollout; NotFound otherwise (another tenant's too)."""
        with self._uow() as uow:
            found = uow.rollouts.get(tenant_id, rollout_id)
        if found is None:
            raise NotFound(f"rollout {rollout_id!r} not found")
        return found

    def page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Rollout], str | None]:
        """A page of the tenant's rollouts by id; the next cursor."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor("rollouts", cursor, 1)[0]
        with self._uow() as uow:
            found = uow.rollouts.page(tenant_id, limit=limit + 1, after=after)
        return next_page(found, limit, "rollouts", lambda rollout: (rollout.rollout_id,))

    @staticmethod
    def _active(uow: RolloutsUnit, tenant_id: str, rollout_id: str) -> Rollout:
        found = uow.rollouts.get(tenant_id, rollout_id)
        if found is None:
            raise NotFound(f"rollout {rollout_id!r} not found")
        if found.status is not RolloutStatus.ACTIVE:
            raise Conflict(f"rollout {rollout_id!r} has ended")
        return found

    def assign(self, tenant_id: str, rollout_id: str, unit_id: str) -> AssignResponse:
        """The unit's arm (the same every time while the weights stay), recorded once."""
        with self._uow() as uow:
            rollout = self._active(uow, tenant_id, rollout_id)
            arm = arm_of(rollout.arms, rollout.key, unit_id)
            recorded = uow.rollouts.assign(
                Assignment(
                    tenant_id=tenant_id,
                    rollout_id=rollout_id,
                    period=rollout.period,
                    unit_id=unit_id,
                    arm=arm.index,
                    assigned_at=self._clock.now(),
                )
            )
            uow.commit()
        chosen = rollout.arms[recorded.arm]
        return AssignResponse(arm=chosen.index, graph_version_ref=chosen.graph_version_ref)

    def update(self, tenant_id: str, rollout_id: str, request: UpdateRolloutRequest) -> Rollout:
        """New weights for the same arms; a new period starts, units move only as they must."""
        _check_weights(request.arms)
        with self._uow() as uow:
            rollout = self._active(uow, tenant_id, rollout_id)
            given = [arm.graph_version_ref for arm in request.arms]
            if given != [arm.graph_version_ref for arm in rollout.arms]:
                msg = "must be the rollout's arms in their order"
                raise _invalid("the arms differ from the rollout's", ("arms",), msg)
            weights = [arm.weight for arm in request.arms]
            buckets = rebalanced(rollout.arms, weights)
            changed = attrs.evolve(
                rollout,
                arms=tuple(
                    attrs.evolve(arm, weight=w, buckets=b)
                    for arm, w, b in zip(rollout.arms, weights, buckets, strict=True)
                ),
                period=rollout.period + 1,
                updated_at=self._clock.now(),
            )
            uow.rollouts.replace(changed)
            uow.commit()
        log.info("rollout_weights tenant=%s rollout=%s weights=%s", tenant_id, rollout_id, weights)
        return changed

    def end(self, tenant_id: str, rollout_id: str, graph_version_ref: str) -> Rollout:
        """Promote the arm running ``graph_version_ref``: the deployment runs it from now on."""
        with self._uow() as uow:
            rollout = self._active(uow, tenant_id, rollout_id)
            if graph_version_ref not in {arm.graph_version_ref for arm in rollout.arms}:
                loc = ("graph_version_ref",)
                raise _invalid("no arm runs that graph version", loc, "must name an arm")
            graph_id, _, version = graph_version_ref.rpartition("@")
            if (
                uow.deployments.rebind(tenant_id, rollout.deployment_ref, graph_id, int(version))
                is None
            ):
                raise NotFound(f"deployment {rollout.deployment_ref!r} not found")
            ended = attrs.evolve(
                rollout,
                status=RolloutStatus.ENDED,
                promoted_graph_version_ref=graph_version_ref,
                updated_at=self._clock.now(),
            )
            uow.rollouts.replace(ended)
            uow.commit()
        log.info(
            "rollout_ended tenant=%s rollout=%s promoted=%s",
            tenant_id,
            rollout_id,
            graph_version_ref,
        )
        return ended

    def verify(self, tenant_id: str, rollout_id: str) -> VerifyResponse:
        """Whether the current period's assignments followed the weights (ADR 0089)."""
        with self._uow() as uow:
            rollout = uow.rollouts.get(tenant_id, rollout_id)
            if rollout is None:
                raise NotFound(f"rollout {rollout_id!r} not found")
            found = uow.rollouts.assignments(tenant_id, rollout_id, rollout.period)
        return verify(rollout, found)


__all__ = ["RolloutService"]
