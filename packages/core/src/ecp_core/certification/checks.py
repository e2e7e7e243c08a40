"""Checks of certification requests beyond their schemas, made before anything is read."""

from datetime import datetime

from ecp_core.certification.model import (
    ACTOR_ID_MAX,
    MAX_OVERRIDE,
    CertificationOverrideRequest,
    CertificationState,
    TransitionRequest,
)
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.identity import ActorIdentity


def _invalid(loc: str, msg: str) -> ValidationFailed:
    return ValidationFailed(f"invalid {loc}", errors=[FieldError(loc=(loc,), msg=msg)])


def check_transition_request(request: TransitionRequest) -> None:
    """ValidationFailed when the body misses what its target needs, or names what it cannot use."""
    if request.to is CertificationState.REVOKED and request.reason is None:
        raise _invalid("reason", "a revocation needs a reason")
    promoting = request.to is CertificationState.PROMOTED
    if promoting and request.promotion_target_key is None:
        raise _invalid("promotion_target_key", "a promotion needs the target it promotes to")
    if not promoting and request.promotion_target_key is not None:
        raise _invalid("promotion_target_key", "only a promotion takes a promotion_target_key")


def check_override_request(request: CertificationOverrideRequest, now: datetime) -> None:
    """ValidationFailed unless ``expires_at`` is after ``now`` and within :data:`MAX_OVERRIDE`."""
    if request.expires_at <= now:
        raise _invalid("expires_at", "must be in the future")
    if request.expires_at > now + MAX_OVERRIDE:
        raise _invalid("expires_at", f"must be at most {MAX_OVERRIDE.days} days from now")


def actor_id_of(actor: ActorIdentity) -> str:
    """The caller's subject as an override's actor_id; ValidationFailed beyond 1 to 255 chars."""
    if not 1 <= len(actor.subject) <= ACTOR_ID_MAX:
        raise _invalid("actor_id", f"the caller's subject must have 1 to {ACTOR_ID_MAX} characters")
    return actor.subject


__all__ = ["actor_id_of", "check_override_request", "check_transition_request"]
