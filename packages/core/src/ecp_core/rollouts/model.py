"""Rollout requests, rollouts as stored and as shown, assignments and the verify report."""

import enum
from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Items, Range, Text, checked

METHOD_VERSION = "homogeneous-assignment-v1"
"""The assignment and verification method every rollout uses (ADR 0089)."""

MAX_ARMS = 10
"""The most arms a rollout may have."""

GRAPH_VERSION_REF = r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}@[1-9][0-9]{0,9}"
"""``<graph_id>@<version>``: the shape of a graph version reference."""


class RolloutUnit(enum.StrEnum):
    """What one assignment is for: each run on its own, or each subject across its runs."""

    RUN = "run"
    SUBJECT = "subject"


class RolloutStatus(enum.StrEnum):
    """An active rollout assigns; an ended one promoted one arm and assigns no more."""

    ACTIVE = "active"
    ENDED = "ended"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ArmRequest:
    """One arm of a create or weight-change request."""

    graph_version_ref: Annotated[str, Text(3, 211, pattern=GRAPH_VERSION_REF)]
    """The graph version this arm runs, `<graph_id>@<version>`."""
    weight: Annotated[int, Range(0, 100)]
    """The arm's share in percent; the arms' weights sum to 100."""


Arms = Annotated[tuple[ArmRequest, ...], Items(1, MAX_ARMS)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateRolloutRequest:
    """Body of ``POST /v1/rollouts``: arms are numbered from 0 in the order given."""

    deployment_ref: Annotated[str, Text(1, 512)]
    arms: Arms
    """The arms, numbered from 0 in this order; weights are whole percents summing to 100."""
    unit: RolloutUnit = RolloutUnit.RUN
    """What is assigned: each run (`run`) or each subject (`subject`, the run's thread)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class UpdateRolloutRequest:
    """Body of ``PUT /v1/rollouts/{id}``: the same arms in the same order, new weights."""

    arms: Arms
    """The rollout's arms in order, each with its new weight (summing to 100)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class EndRolloutRequest:
    """Body of ``POST /v1/rollouts/{id}/end``: the arm to promote."""

    graph_version_ref: Annotated[str, Text(3, 211, pattern=GRAPH_VERSION_REF)]
    """The graph version of the arm to promote; the deployment runs it from then on."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AssignRequest:
    """Body of ``POST /v1/rollouts/{id}/assign``."""

    unit_id: Annotated[str, Text(1, 512)]
    """The unit to assign (a run id or a subject); the same id always gets the same arm while
    the weights stay."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Arm:
    """A stored arm: its number, graph version, weight and the buckets it owns (ADR 0089)."""

    index: Annotated[int, Range(0)]
    graph_version_ref: str
    weight: Annotated[int, Range(0, 100)]
    buckets: tuple[int, ...]
    """The buckets (0 to 99) whose units the arm takes; as many as its weight."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Rollout:
    """A rollout as stored, with its secret assignment key."""

    tenant_id: str
    rollout_id: str
    deployment_ref: str
    unit: RolloutUnit
    arms: tuple[Arm, ...]
    status: RolloutStatus
    key: str = attrs.field(repr=False)
    """The hex HMAC key assignments are computed under; never answered."""
    period: Annotated[int, Range(1)] = 1
    """Counts the weight settings: each change starts a new period, verified on its own."""
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    promoted_graph_version_ref: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ArmResponse:
    """An arm as answered."""

    index: int
    """The arm's number, from 0 in the order the arms were given."""
    graph_version_ref: str
    weight: int
    """The arm's share in percent."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class RolloutResponse:
    """A rollout as clients see it (the key is never shown)."""

    rollout_id: str
    """The rollout's opaque id."""
    deployment_ref: str
    unit: RolloutUnit
    """What one assignment is for: a run, or a subject."""
    method_version: str
    """Always `homogeneous-assignment-v1`."""
    status: RolloutStatus
    """`active` while it assigns; `ended` once an arm was promoted."""
    arms: tuple[ArmResponse, ...]
    """The arms, numbered from 0."""
    period: int
    """The number of the current weight setting (1 at creation, one more per change)."""
    created_at: datetime
    updated_at: datetime
    promoted_graph_version_ref: str | None = None
    """The arm promoted by `end`; null while active."""

    @classmethod
    def of(cls, rollout: Rollout) -> "RolloutResponse":
        """Project a stored rollout to its public shape."""
        return cls(
            rollout_id=rollout.rollout_id,
            deployment_ref=rollout.deployment_ref,
            unit=rollout.unit,
            method_version=METHOD_VERSION,
            status=rollout.status,
            arms=tuple(
                ArmResponse(index=a.index, graph_version_ref=a.graph_version_ref, weight=a.weight)
                for a in rollout.arms
            ),
            period=rollout.period,
            created_at=rollout.created_at,
            updated_at=rollout.updated_at,
            promoted_graph_version_ref=rollout.promoted_graph_version_ref,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class RolloutListResponse:
    """A page of the tenant's rollouts by id; ``next_cursor`` when more remain."""

    rollouts: tuple[RolloutResponse, ...]
    """The page of rollouts, by id."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class Assignment:
    """A unit's first assignment in one weight period of a rollout."""

    tenant_id: str
    rollout_id: str
    period: Annotated[int, Range(1)]
    unit_id: str
    arm: Annotated[int, Range(0)]
    assigned_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class AssignResponse:
    """The arm a unit is assigned and the graph version it runs."""

    arm: int
    """The arm's number."""
    graph_version_ref: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class ArmCount:
    """An arm's observed count of assignments and the count its weight implies."""

    expected: float
    """The count the weight implies: the period's assignments times the weight."""
    observed: int
    """How many units the arm was assigned in the period."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TimeBucket:
    """The assignments of one time slice of the period, per arm."""

    start: datetime
    """The slice's first instant."""
    end: datetime
    """The slice's last instant."""
    observed: tuple[int, ...]
    """The count per arm, by arm number."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class VerifyResponse:
    """``GET /v1/rollouts/{id}/verify``: whether assignment followed the weights (ADR 0089)."""

    method_version: str
    """Always `homogeneous-assignment-v1`."""
    homogeneous: bool | None
    """False when either test flags (p < 0.001); null (abstain) below the minimum count."""
    sample_ratio_p_value: float | None
    """The sample-ratio-mismatch test's p-value; null when it abstains."""
    sample_ratio_test: str | None
    """`chi_square`, `exact_binomial` or null (abstained)."""
    drift_p_value: float | None
    """The arm-by-time-bucket independence test's p-value; null when it abstains."""
    period: int
    """The weight period verified (the current one)."""
    arms: tuple[ArmCount, ...]
    """Per arm, by number: the observed count and the count the weights imply."""
    time_buckets: tuple[TimeBucket, ...]
    """The period cut into equal-width time slices, with each arm's count in each."""
    limitations: tuple[str, ...]
    """What the verification does not show, in words."""
