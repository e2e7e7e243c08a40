"""The table of certification transitions and the check every move passes (ADR 0043).

``buildable → test_deployable → certified → promoted``, each step needing more of the
evaluation; any state but ``revoked`` may be revoked (with a reason); nothing leaves ``revoked``.
Every pair the table does not list is refused, and a refused move changes nothing.
"""

import enum

from ecp_core.certification.model import CertificationEvaluation, CertificationState
from ecp_core.errors import CertificationBlocked, CertificationTransitionNotAllowed, FieldError

S = CertificationState


class Requirement(enum.StrEnum):
    """What an allowed move needs of the evaluation at the moment it is made."""

    TEST_DEPLOYABLE = "test_deployable"
    """No blocker an override cannot waive."""
    PRODUCTION_READY = "production_ready"
    """No blocker left once the active override waived what it covers."""
    NOTHING = "nothing"
    """Always allowed (revoking; a reason is required instead)."""


TRANSITIONS: dict[tuple[CertificationState, CertificationState], Requirement] = {
    (S.BUILDABLE, S.TEST_DEPLOYABLE): Requirement.TEST_DEPLOYABLE,
    (S.TEST_DEPLOYABLE, S.CERTIFIED): Requirement.PRODUCTION_READY,
    (S.CERTIFIED, S.PROMOTED): Requirement.PRODUCTION_READY,
    (S.BUILDABLE, S.REVOKED): Requirement.NOTHING,
    (S.TEST_DEPLOYABLE, S.REVOKED): Requirement.NOTHING,
    (S.CERTIFIED, S.REVOKED): Requirement.NOTHING,
    (S.PROMOTED, S.REVOKED): Requirement.NOTHING,
}
"""Every allowed (from, to) pair and what it needs; any other pair is refused."""


def met(requirement: Requirement, evaluation: CertificationEvaluation) -> bool:
    """Whether ``evaluation`` satisfies ``requirement``."""
    if requirement is Requirement.TEST_DEPLOYABLE:
        return evaluation.test_deployable
    if requirement is Requirement.PRODUCTION_READY:
        return evaluation.production_ready
    return True


def check_transition(
    current: CertificationState, to: CertificationState, evaluation: CertificationEvaluation
) -> None:
    """Pass, or raise why ``current → to`` is refused now (both errors name the pair)."""
    requirement = TRANSITIONS.get((current, to))
    if requirement is None:
        raise CertificationTransitionNotAllowed(
            f"a certification cannot move from {current.value} to {to.value}"
        )
    if not met(requirement, evaluation):
        standing = [
            b
            for b in evaluation.blockers
            if requirement is Requirement.PRODUCTION_READY or not b.overridable
        ]
        raise CertificationBlocked(
            f"{current.value} to {to.value} needs {requirement.value}; blockers stand: "
            + ", ".join(b.code for b in standing),
            errors=[FieldError(loc=("blockers", b.code), msg=b.message) for b in standing],
        )


__all__ = [
    "TRANSITIONS",
    "Requirement",
    "check_transition",
    "met",
]
