"""Who acts: the authenticated caller as the core sees it."""

from typing import Annotated

import attrs

from ecp_core.constraints import Text, checked
from ecp_core.types import AuthMethod, ServiceRole

DEFAULT_TENANT = "default"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ActorIdentity:
    """An authenticated subject acting for one tenant with some roles."""

    subject: Annotated[str, Text(1, 512)]
    """Who acted: the token's or API key's subject."""
    auth_method: AuthMethod
    """How the actor authenticated."""
    roles: tuple[ServiceRole, ...] = ()
    """The roles the actor held when acting."""
    tenant_id: Annotated[str, Text(1, 512)] = DEFAULT_TENANT
    workspace_id: str | None = None

    def has_role(self, role: ServiceRole) -> bool:
        """Say whether the actor holds ``role``."""
        return role in self.roles


def system_actor(tenant_id: str, subject: str = "ecp-system") -> ActorIdentity:
    """The identity the service itself uses for work it does on its own (escalations)."""
    return ActorIdentity(
        subject=subject, auth_method=AuthMethod.API_KEY, roles=(), tenant_id=tenant_id
    )


__all__ = ["DEFAULT_TENANT", "ActorIdentity", "system_actor"]
