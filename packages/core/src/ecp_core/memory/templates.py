"""TemplateRepository in memory."""

from ecp_core.errors import Conflict, exists
from ecp_core.memory.tables import Repository, detached
from ecp_core.templates.model import TemplateVersion

TEMPLATES = "templates"


class MemoryTemplates(Repository):
    """Template versions keyed by (tenant, name, version)."""

    def add(self, version: TemplateVersion) -> None:
        """Store a new version."""
        key = (version.tenant_id, version.name, version.version)
        if key in self._t.table(TEMPLATES):
            raise exists("template", f"{version.name}@{version.version}")
        if self.find_digest(version.tenant_id, version.name, version.digest) is not None:
            raise Conflict(f"template {version.name!r} holds this content already")
        self._t.put(TEMPLATES, key, version)

    def _versions(self, tenant_id: str, name: str) -> list[TemplateVersion]:
        return sorted(
            (v for (t, n, _), v in self._t.table(TEMPLATES).items() if (t, n) == (tenant_id, name)),
            key=lambda v: v.version,
        )

    @detached
    def get(self, tenant_id: str, name: str, version: int) -> TemplateVersion | None:
        """One version, or None."""
        found: TemplateVersion | None = self._t.table(TEMPLATES).get((tenant_id, name, version))
        return found

    @detached
    def latest(self, tenant_id: str, name: str) -> TemplateVersion | None:
        """The highest version, or None."""
        versions = self._versions(tenant_id, name)
        return versions[-1] if versions else None

    @detached
    def find_digest(self, tenant_id: str, name: str, digest: str) -> TemplateVersion | None:
        """The version with this digest, or None."""
        return next((v for v in self._versions(tenant_id, name) if v.digest == digest), None)

    @detached
    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[TemplateVersion]:
        """The latest version of each template, by name in code point order, after ``after``."""
        names = {
            n
            for (t, n, _) in self._t.table(TEMPLATES)
            if t == tenant_id and (after is None or n > after)
        }
        return [self._versions(tenant_id, n)[-1] for n in sorted(names)[:limit]]


__all__ = ["MemoryTemplates"]
