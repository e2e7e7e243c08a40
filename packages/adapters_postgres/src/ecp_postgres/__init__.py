"""PostgreSQL adapter for ECP.

Every storage port of the core on psycopg 3, yoyo migrations, and an embedded server
(``pgserver``) for when no database URL is configured. The modules mirror ``ecp_core.memory``
one per storage area (``graphs``, ``runs``, ``evidence``, ...); ``database``,
``rows``, ``errors``, ``embedded``, ``runtime``, ``operations`` and ``migrations`` are this
package's own plumbing.

The names below are imported on first use (PEP 562), so that a command needing only the
migrations (``ecp migrate list``) does not import every repository and the pool (ADR 0053).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecp_postgres.database import (
        PostgresStore,
        create_database,
        drop_database,
        with_database,
    )
    from ecp_postgres.embedded import EmbeddedPostgres
    from ecp_postgres.errors import DatabaseUnavailable
    from ecp_postgres.migrations import SchemaState, schema_state
    from ecp_postgres.migrations import apply as apply_migrations
    from ecp_postgres.migrations import rollback as rollback_migrations
    from ecp_postgres.migrations import status as migration_status
    from ecp_postgres.runtime import check_database, database_url
    from ecp_postgres.unit import PostgresUnitOfWork

_HOMES = {
    "PostgresStore": ("database", "PostgresStore"),
    "PostgresUnitOfWork": ("unit", "PostgresUnitOfWork"),
    "create_database": ("database", "create_database"),
    "drop_database": ("database", "drop_database"),
    "with_database": ("database", "with_database"),
    "EmbeddedPostgres": ("embedded", "EmbeddedPostgres"),
    "DatabaseUnavailable": ("errors", "DatabaseUnavailable"),
    "apply_migrations": ("migrations", "apply"),
    "rollback_migrations": ("migrations", "rollback"),
    "migration_status": ("migrations", "status"),
    "SchemaState": ("migrations", "SchemaState"),
    "schema_state": ("migrations", "schema_state"),
    "check_database": ("runtime", "check_database"),
    "database_url": ("runtime", "database_url"),
}
"""Each public name: the module it lives in and its name there."""


def __getattr__(name: str) -> Any:  # noqa: ANN401 - any of the names above
    """Import a public name from its module on first use."""
    try:
        module, attribute = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module 'ecp_postgres' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"ecp_postgres.{module}"), attribute)
    globals()[name] = value
    return value


__all__ = [
    "DatabaseUnavailable",
    "EmbeddedPostgres",
    "PostgresStore",
    "PostgresUnitOfWork",
    "SchemaState",
    "apply_migrations",
    "check_database",
    "create_database",
    "database_url",
    "drop_database",
    "migration_status",
    "rollback_migrations",
    "schema_state",
    "with_database",
]
