"""TemplateRepository on PostgreSQL."""

from ecp_core.errors import Conflict
from ecp_core.templates.model import TemplateVersion
from ecp_postgres.rows import Repository, Table

TEMPLATES = Table("ecp_templates", TemplateVersion, jsonb=["parameters", "graph"])

_LATEST = (
    "NOT EXISTS (SELECT 1 FROM ecp_templates AS newer WHERE newer.tenant_id ="
    " ecp_templates.tenant_id AND newer.name = ecp_templates.name"
    " AND newer.version > ecp_templates.version)"
)
"""Keeps only the highest version of each name."""


class PostgresTemplates(Repository):
    """TemplateRepository on PostgreSQL; the keys refuse a second equal number or digest."""

    def add(self, version: TemplateVersion) -> None:
        """Store a new version."""
        ident = f"{version.name}@{version.version}"
        self._insert(TEMPLATES, version, Conflict(f"template {ident} or its content exists"))

    def get(self, tenant_id: str, name: str, version: int) -> TemplateVersion | None:
        """One version, or None."""
        return self._one(
            TEMPLATES, "tenant_id = %s AND name = %s AND version = %s", (tenant_id, name, version)
        )

    def latest(self, tenant_id: str, name: str) -> TemplateVersion | None:
        """The highest version, or None."""
        found = self._all(
            TEMPLATES,
            "WHERE tenant_id = %s AND name = %s ORDER BY version DESC LIMIT 1",
            (tenant_id, name),
        )
        return found[0] if found else None

    def find_digest(self, tenant_id: str, name: str, digest: str) -> TemplateVersion | None:
        """The version with this digest, or None."""
        return self._one(
            TEMPLATES, "tenant_id = %s AND name = %s AND digest = %s", (tenant_id, name, digest)
        )

    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[TemplateVersion]:
        """The latest version of each template, by name in code point order, after ``after``."""
        # The primary key (tenant_id, name COLLATE "C", version) orders and probes.
        if after is None:
            return self._all(
                TEMPLATES,
                f"WHERE tenant_id = %s AND {_LATEST} ORDER BY name LIMIT %s",
                (tenant_id, limit),
            )
        return self._all(
            TEMPLATES,
            f"WHERE tenant_id = %s AND name > %s AND {_LATEST} ORDER BY name LIMIT %s",
            (tenant_id, after, limit),
        )


__all__ = ["PostgresTemplates"]
