"""The accounts adapters are their ports: a drift between them fails type-checking."""

from ecp_core.memory.accounts import MemoryIdentityBindings
from ecp_core.ports.accounts import IdentityBindingRepository, IdentityProvider
from ecp_idp.workos import WorkOSAuthKit
from ecp_postgres.accounts import PostgresIdentityBindings


def memory_identity_bindings(x: MemoryIdentityBindings) -> IdentityBindingRepository:
    """MemoryIdentityBindings is an IdentityBindingRepository."""
    return x


def postgres_identity_bindings(x: PostgresIdentityBindings) -> IdentityBindingRepository:
    """PostgresIdentityBindings is an IdentityBindingRepository."""
    return x


def workos_provider(x: WorkOSAuthKit) -> IdentityProvider:
    """WorkOSAuthKit is an IdentityProvider."""
    return x
