"""Certifications of application builds: states, blockers, overrides, events and the wire forms.

A certification is one build (tenant, app_name, app_commit, image_digest) running as one
deployment. Its evaluation is computed whenever it is read; its state moves only through the
table of :mod:`ecp_core.certification.transitions`; every change appends one
:class:`CertificationEvent` (ADR 0043).
"""

import enum
from datetime import datetime, timedelta
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Items, Text, checked
from ecp_core.deployments.model import DeploymentRef

MAX_OVERRIDE = timedelta(days=30)
"""The longest an override may run: its expires_at is at most this far after its grant."""

OCI_DIGEST = r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+"
"""An image digest in the OCI image-spec grammar, e.g. ``sha256:<64 hex>``."""

Reason = Annotated[str, Text(1, 500)]
ActorId = Annotated[str, Text(1, 255)]
ACTOR_ID_MAX = 255


class CertificationState(enum.StrEnum):
    """Where a build stands (spec "Certification")."""

    BUILDABLE = "buildable"
    TEST_DEPLOYABLE = "test_deployable"
    CERTIFIED = "certified"
    PROMOTED = "promoted"
    REVOKED = "revoked"


class OverrideScope(enum.StrEnum):
    """What an override may waive: one value per overridable blocker, named as its code."""

    POLICY_MISSING = "policy_missing"
    ATTESTATION_MISSING = "attestation_missing"
    UNAPPROVED_CONSEQUENTIAL_ACTION = "unapproved_consequential_action"


class EventType(enum.StrEnum):
    """What a certification event records."""

    CREATED = "created"
    TRANSITIONED = "transitioned"
    OVERRIDE_GRANTED = "override_granted"
    OVERRIDE_WITHDRAWN = "override_withdrawn"


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationBlocker:
    """Why a build is not (yet) ready, what to do about it, and whether an override may waive it."""

    code: str
    """What stands in the way, as a code."""
    message: str
    """The same in words."""
    remediation: str
    """What to do about it."""
    overridable: bool = False
    """Whether an override may waive it."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationEvaluation:
    """Whether the build may run for tests, or in production, and what stands in the way.

    ``test_deployable``: no blocker that no override can waive. ``production_ready``: no
    blocker left once the active override waived what it covers.
    """

    test_deployable: bool
    """Whether the build may run for tests: no blocker that no override can waive."""
    production_ready: bool
    """Whether the build may run in production: no blocker left once the active override waived what
    it covers.
    """
    blockers: tuple[CertificationBlocker, ...] = ()
    """What stands in the way."""
    certification_id: str | None = None
    override_active: bool = False
    """Whether an override is in force now."""
    state: CertificationState | None = None
    """The certification's state."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationOverride:
    """A time-boxed waiver of some overridable blockers, granted by a named actor."""

    scopes: Annotated[tuple[OverrideScope, ...], Items(1, unique=True)]
    """The overridable blockers it waives."""
    reason: Reason
    """Why it was granted."""
    actor_id: ActorId
    """Who granted it."""
    created_at: Annotated[datetime, AwareUtc()]
    expires_at: Annotated[datetime, AwareUtc()]

    def active(self, now: datetime) -> bool:
        """Whether it still waives its scopes at ``now`` (expiry is exclusive)."""
        return now < self.expires_at


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationOverrideRequest:
    """Body of ``PUT /v1/certifications/{id}/override``; the actor is the caller."""

    scopes: Annotated[tuple[OverrideScope, ...], Items(1, unique=True)]
    """The overridable blockers to waive."""
    reason: Reason
    """Why the waiver is granted."""
    expires_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationEvent:
    """One change of a certification, appended once and never rewritten; ``state`` is after it."""

    event_id: str
    certification_id: str
    tenant_id: str
    event_type: str
    """What changed: created, transitioned, or an override granted or withdrawn."""
    actor_id: str
    """Who made the change."""
    state: CertificationState
    """The certification's state after the change."""
    created_at: Annotated[datetime, AwareUtc()]
    override_expires_at: Annotated[datetime, AwareUtc()] | None = None
    """When the granted override ends (RFC 3339, UTC)."""
    promotion_target_key: str | None = None
    """Where the build was promoted to, on a promotion."""
    reason: str | None = None
    """Why, in the actor's words."""
    workspace_id: str | None = None
    scopes: tuple[OverrideScope, ...] = ()
    """What the granted or withdrawn override covers."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateCertificationRequest:
    """Body of ``POST /v1/certifications``: the build and the deployment it runs as."""

    app_name: Annotated[str, Text(1, 200, trimmed=True)]
    """The application's name."""
    app_commit: Annotated[str, Text(1, 200, no_whitespace=True)]
    """The commit the build was made from."""
    image_digest: Annotated[str, Text(1, 512, pattern=OCI_DIGEST)]
    """The OCI image digest of the build (`sha256:...`)."""
    deployment_ref: DeploymentRef
    workspace_id: Annotated[str, Text(1, 255)] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class TransitionRequest:
    """Body of ``POST /v1/certifications/{id}/transitions``: the state to move to.

    ``reason`` is required to revoke, ``promotion_target_key`` to promote (and only there).
    """

    to: CertificationState
    """The state to move to."""
    reason: Reason | None = None
    """Why; required to revoke."""
    promotion_target_key: Annotated[str, Text(1, 255, trimmed=True)] | None = None
    """Where the build is promoted to; required to promote, and only there."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Certification:
    """A certification as stored (its events are stored beside it, append-only)."""

    certification_id: str
    tenant_id: str
    app_name: str
    app_commit: str
    image_digest: str
    deployment_ref: str
    state: CertificationState
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    workspace_id: str | None = None
    promotion_target_key: str | None = None
    override: CertificationOverride | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationResponse:
    """A certification as read: evaluated now, with every event in order."""

    certification_id: str
    tenant_id: str
    app_name: str
    """The application's name."""
    app_commit: str
    """The commit the build was made from."""
    image_digest: str
    """The OCI image digest of the build."""
    state: str
    """The certification's state."""
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    evaluation: CertificationEvaluation
    """Whether the build may run for tests or in production now, and what stands in the way."""
    events: tuple[CertificationEvent, ...]
    """Every change of the certification, in order."""
    workspace_id: str | None = None
    promotion_target_key: str | None = None
    """Where the build was promoted to."""
    override: CertificationOverride | None = None
    """The override granted, if any."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationListResponse:
    """A page of the tenant's certifications, by certification id."""

    certifications: tuple[CertificationResponse, ...]
    """One page of the tenant's certifications, by id."""
    next_cursor: str | None = None


__all__ = [
    "ACTOR_ID_MAX",
    "MAX_OVERRIDE",
    "OCI_DIGEST",
    "Certification",
    "CertificationBlocker",
    "CertificationEvaluation",
    "CertificationEvent",
    "CertificationListResponse",
    "CertificationOverride",
    "CertificationOverrideRequest",
    "CertificationResponse",
    "CertificationState",
    "CreateCertificationRequest",
    "EventType",
    "OverrideScope",
    "TransitionRequest",
]
