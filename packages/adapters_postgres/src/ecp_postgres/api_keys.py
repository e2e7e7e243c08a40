"""ApiKeyRepository on PostgreSQL."""

from datetime import datetime

from ecp_core.api_keys.model import ApiKey
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

API_KEYS = Table("ecp_api_keys", ApiKey)


class PostgresApiKeys(Repository):
    """ApiKeyRepository on PostgreSQL; authentication reads through the unique hash index."""

    def add(self, key: ApiKey) -> None:
        """Store a new key (Conflict when its id or hash exists)."""
        self._insert(API_KEYS, key, exists("API key", key.key_id))

    def get(self, tenant_id: str, key_id: str) -> ApiKey | None:
        """One key of the tenant, or None."""
        return self._one(API_KEYS, "key_id = %s AND tenant_id = %s", (key_id, tenant_id))

    def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, or None."""
        return self._one(API_KEYS, "key_hash = %s", (key_hash,))

    def page(
        self, tenant_id: str, *, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[ApiKey]:
        """Keys by (created_at, key_id), after ``after``."""
        if after is None:
            return self._all(
                API_KEYS,
                "WHERE tenant_id = %s ORDER BY created_at, key_id LIMIT %s",
                (tenant_id, limit),
            )
        return self._all(
            API_KEYS,
            "WHERE tenant_id = %s AND (created_at, key_id) > (%s, %s)"
            " ORDER BY created_at, key_id LIMIT %s",
            (tenant_id, *after, limit),
        )

    def revoke(self, tenant_id: str, key_id: str, revoked_at: datetime) -> ApiKey | None:
        """Set revoked_at unless already set; the key after, or None."""
        row = self._conn.execute(
            "UPDATE ecp_api_keys SET revoked_at = COALESCE(revoked_at, %s)"  # noqa: S608
            f" WHERE key_id = %s AND tenant_id = %s RETURNING {API_KEYS.column_list}",
            (revoked_at, key_id, tenant_id),
        ).fetchone()
        return None if row is None else API_KEYS.load(row)
