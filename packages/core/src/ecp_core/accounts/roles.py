"""The role slugs an identity provider may send, and the one rule that reads them.

The provider is configured with four roles (spec "Authentication" 5): admin, analyst, approver
and viewer. Any other slug, the service's internal ``operator`` and ``worker`` included, is
refused rather than ignored, so a typo at the provider never silently narrows or widens access.
"""

from collections.abc import Sequence

from ecp_core.errors import UnknownRole
from ecp_core.types import ServiceRole

PROVIDER_ROLES: dict[str, ServiceRole] = {
    role.value: role
    for role in (ServiceRole.ADMIN, ServiceRole.ANALYST, ServiceRole.APPROVER, ServiceRole.VIEWER)
}
"""Slug → role for every role a provider's token may name."""


def provider_roles(slugs: Sequence[str]) -> tuple[ServiceRole, ...]:
    """The roles ``slugs`` name, in order and without repeats; UnknownRole for any other slug.

    A token without any role grants nothing and is refused too.
    """
    unknown = sorted({slug for slug in slugs if slug not in PROVIDER_ROLES})
    if unknown:
        raise UnknownRole(f"the identity provider sent unknown role slugs: {', '.join(unknown)}")
    if not slugs:
        raise UnknownRole("the identity provider sent no role")
    return tuple(dict.fromkeys(PROVIDER_ROLES[slug] for slug in slugs))


__all__ = ["PROVIDER_ROLES", "provider_roles"]
