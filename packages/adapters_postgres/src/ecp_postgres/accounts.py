"""IdentityBindingRepository on PostgreSQL: one row per (provider, organization)."""

from ecp_core.accounts.model import IdentityBinding
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

BINDINGS = Table("ecp_identity_bindings", IdentityBinding)


class PostgresIdentityBindings(Repository):
    """Bindings by (provider, organization); a tenant is bound to one organization at most."""

    def get(self, provider: str, organization_id: str) -> IdentityBinding | None:
        """The organization's binding, or None."""
        return self._one(
            BINDINGS, "provider = %s AND organization_id = %s", (provider, organization_id)
        )

    def add(self, binding: IdentityBinding) -> None:
        """Bind an organization once (a concurrent first binding waits, then conflicts)."""
        ident = f"{binding.provider}:{binding.organization_id}"
        self._insert(BINDINGS, binding, exists("identity binding", ident))
