"""ApiKeyRepository in memory."""

from datetime import datetime

import attrs

from ecp_core.api_keys.model import ApiKey
from ecp_core.errors import Conflict, exists
from ecp_core.memory.tables import Repository, detached


class MemoryApiKeys(Repository):
    """ApiKeyRepository in memory: keys by id, and an index from hash to id."""

    def add(self, key: ApiKey) -> None:
        """Store a new key."""
        if key.key_id in self._t.table("api_keys"):
            raise exists("API key", key.key_id)
        if key.key_hash in self._t.table("api_key_hashes"):
            raise Conflict("an API key with this hash exists")
        self._t.put("api_keys", key.key_id, key)
        self._t.put("api_key_hashes", key.key_hash, key.key_id)

    @detached
    def get(self, tenant_id: str, key_id: str) -> ApiKey | None:
        """One key of the tenant, or None."""
        found: ApiKey | None = self._t.table("api_keys").get(key_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    @detached
    def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, or None."""
        key_id = self._t.table("api_key_hashes").get(key_hash)
        found: ApiKey | None = None if key_id is None else self._t.table("api_keys").get(key_id)
        return found

    @detached
    def page(
        self, tenant_id: str, *, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[ApiKey]:
        """Keys by (created_at, key_id), after ``after``."""
        found = sorted(
            (key for key in self._t.table("api_keys").values() if key.tenant_id == tenant_id),
            key=lambda key: (key.created_at, key.key_id),
        )
        if after is not None:
            found = [key for key in found if (key.created_at, key.key_id) > after]
        return found[:limit]

    @detached
    def revoke(self, tenant_id: str, key_id: str, revoked_at: datetime) -> ApiKey | None:
        """Set revoked_at unless already set; the key after, or None."""
        found = self.get(tenant_id, key_id)
        if found is None:
            return None
        if found.revoked_at is None:
            found = attrs.evolve(found, revoked_at=revoked_at)
            self._t.put("api_keys", key_id, found)
        return found
