"""The API key port: project keys, stored by hash."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.api_keys.model import ApiKey


class ApiKeyRepository(Protocol):
    """Project API keys (their hashes, never the keys) per tenant."""

    def add(self, key: ApiKey) -> None:
        """Store a new key (Conflict when its key_id or key_hash exists)."""
        ...

    def get(self, tenant_id: str, key_id: str) -> ApiKey | None:
        """One key of the tenant, revoked or not, or None."""
        ...

    def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash in any tenant, revoked or not, or None (authentication)."""
        ...

    def page(
        self, tenant_id: str, *, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[ApiKey]:
        """Up to ``limit`` keys by (created_at, key_id), after that pair when given."""
        ...

    def revoke(self, tenant_id: str, key_id: str, revoked_at: datetime) -> ApiKey | None:
        """Set revoked_at unless already set (the first revocation stays); the key, or None."""
        ...


class WithApiKeys(Protocol):
    """A unit of work that reaches the API keys."""

    @property
    def api_keys(self) -> ApiKeyRepository:
        """The API keys."""
        ...


class ApiKeysUnit(Transaction, WithApiKeys, Protocol):
    """What the API key use cases need."""


__all__ = ["ApiKeyRepository", "ApiKeysUnit", "WithApiKeys"]
