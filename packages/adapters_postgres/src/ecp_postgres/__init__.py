"""PostgreSQL adapter for ECP.

Every storage port of the core on psycopg 3, yoyo migrations, and an embedded server
(``pgserver``) for when no database URL is configured. The modules mirror ``ecp_core.memory``
one per storage area (``graphs``, ``runs``, ``evidence``, ``debugger``, ...); ``database``,
``rows``, ``errors``, ``embedded``, ``runtime``, ``operations`` and ``migrations`` are this
package's own plumbing.
"""

from ecp_postgres.database import (
    PostgresStore,
    PostgresUnitOfWork,
    create_database,
    drop_database,
    with_database,
)
from ecp_postgres.embedded import EmbeddedPostgres
from ecp_postgres.errors import DatabaseUnavailable
from ecp_postgres.migrations import apply as apply_migrations
from ecp_postgres.migrations import rollback as rollback_migrations
from ecp_postgres.migrations import status as migration_status
from ecp_postgres.runtime import check_database, database_url

__all__ = [
    "DatabaseUnavailable",
    "EmbeddedPostgres",
    "PostgresStore",
    "PostgresUnitOfWork",
    "apply_migrations",
    "check_database",
    "create_database",
    "database_url",
    "drop_database",
    "migration_status",
    "rollback_migrations",
    "with_database",
]
