"""IdentityBindingRepository in memory."""

from ecp_core.accounts.model import IdentityBinding
from ecp_core.errors import Conflict, exists
from ecp_core.memory.tables import Repository, detached


class MemoryIdentityBindings(Repository):
    """Bindings by (provider, organization), and the set of bound tenants."""

    @detached
    def get(self, provider: str, organization_id: str) -> IdentityBinding | None:
        """The organization's binding, or None."""
        found: IdentityBinding | None = self._t.table("identity_bindings").get(
            (provider, organization_id)
        )
        return found

    def add(self, binding: IdentityBinding) -> None:
        """Bind an organization once; its tenant must not be bound already."""
        key = (binding.provider, binding.organization_id)
        if key in self._t.table("identity_bindings"):
            raise exists("identity binding", f"{binding.provider}:{binding.organization_id}")
        if binding.tenant_id in self._t.table("bound_tenants"):
            raise Conflict(f"tenant {binding.tenant_id} is bound to another organization")
        self._t.put("identity_bindings", key, binding)
        self._t.put("bound_tenants", binding.tenant_id, key)
