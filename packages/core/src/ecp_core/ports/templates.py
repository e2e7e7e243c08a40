"""Storage port of the templates area: immutable, numbered template versions per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.templates.model import TemplateVersion


class TemplateRepository(Protocol):
    """Immutable template versions, numbered per (tenant, name)."""

    def add(self, version: TemplateVersion) -> None:
        """Store a new version; Conflict when its number, or its digest, is stored for the name."""
        ...

    def get(self, tenant_id: str, name: str, version: int) -> TemplateVersion | None:
        """One version, or None."""
        ...

    def latest(self, tenant_id: str, name: str) -> TemplateVersion | None:
        """The highest version, or None."""
        ...

    def find_digest(self, tenant_id: str, name: str, digest: str) -> TemplateVersion | None:
        """The version with this content digest, or None."""
        ...

    def latest_page(
        self, tenant_id: str, *, limit: int, after: str | None = None
    ) -> list[TemplateVersion]:
        """The latest version of up to ``limit`` templates, by name in code point order.

        Only names after ``after`` when given.
        """
        ...


class WithTemplates(Protocol):
    """A unit of work that reaches the template versions."""

    @property
    def templates(self) -> TemplateRepository:
        """The template versions."""
        ...


class TemplatesUnit(Transaction, WithTemplates, Protocol):
    """What the template use cases need of storage (graphs are registered by the catalog)."""


__all__ = ["TemplateRepository", "TemplatesUnit", "WithTemplates"]
