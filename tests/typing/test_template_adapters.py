"""The template adapters are their port: a drift between them fails type-checking."""

from ecp_core.memory.templates import MemoryTemplates
from ecp_core.ports.templates import TemplateRepository
from ecp_postgres.templates import PostgresTemplates


def memory_templates(x: MemoryTemplates) -> TemplateRepository:
    """MemoryTemplates is a TemplateRepository."""
    return x


def postgres_templates(x: PostgresTemplates) -> TemplateRepository:
    """PostgresTemplates is a TemplateRepository."""
    return x
