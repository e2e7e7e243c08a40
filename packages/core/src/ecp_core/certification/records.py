"""What a change records (its event) and how a certification reads (its response)."""

from collections.abc import Sequence
from datetime import datetime

from ecp_core.certification.model import (
    Certification,
    CertificationEvaluation,
    CertificationEvent,
    CertificationOverride,
    CertificationResponse,
    EventType,
)


def event_of(
    event_id: str,
    certification: Certification,
    actor_id: str,
    event_type: EventType,
    now: datetime,
    *,
    reason: str | None = None,
    promotion_target_key: str | None = None,
    override: CertificationOverride | None = None,
) -> CertificationEvent:
    """The event of a change that left ``certification`` as it is, made by ``actor_id``.

    ``override`` is the one granted or withdrawn: its expiry and scopes go on the event.
    """
    return CertificationEvent(
        event_id=event_id,
        certification_id=certification.certification_id,
        tenant_id=certification.tenant_id,
        event_type=event_type.value,
        actor_id=actor_id,
        state=certification.state,
        created_at=now,
        override_expires_at=None if override is None else override.expires_at,
        promotion_target_key=promotion_target_key,
        reason=reason,
        workspace_id=certification.workspace_id,
        scopes=() if override is None else override.scopes,
    )


def response_of(
    certification: Certification,
    evaluation: CertificationEvaluation,
    events: Sequence[CertificationEvent],
) -> CertificationResponse:
    """The certification as read: its fields, the evaluation made now and its events in order."""
    return CertificationResponse(
        certification_id=certification.certification_id,
        tenant_id=certification.tenant_id,
        app_name=certification.app_name,
        app_commit=certification.app_commit,
        image_digest=certification.image_digest,
        state=certification.state.value,
        created_at=certification.created_at,
        updated_at=certification.updated_at,
        workspace_id=certification.workspace_id,
        promotion_target_key=certification.promotion_target_key,
        override=certification.override,
        evaluation=evaluation,
        events=tuple(events),
    )


__all__ = ["event_of", "response_of"]
