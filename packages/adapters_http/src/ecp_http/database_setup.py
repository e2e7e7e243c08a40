"""The database a command uses, and ``ecp migrate``'s work on it.

Kept apart from the composition root so that ``ecp migrate`` imports the migrations and the
driver only, not the application (ADR 0053): listing the state answers at once while a server
runs, and takes no lock (ADR 0022).
"""

import contextlib
from collections.abc import Iterator, Mapping

from ecp_postgres.migrations import apply, rollback, status
from ecp_postgres.runtime import check_database, database_url


@contextlib.contextmanager
def database(environ: Mapping[str, str]) -> Iterator[str]:
    """The database URL, checked reachable: ``ECP_DATABASE_URL``, else the embedded server.

    Only those two settings of ``environ`` are read. The embedded PostgreSQL lives under
    ``ECP_DATA_DIR`` and stops when the block ends (unless another process, a running server,
    still uses it). Raises DatabaseUnavailable with one line when the database cannot be reached.
    """
    with database_url(environ) as url:
        check_database(url)
        yield url


def migrate(environ: Mapping[str, str], action: str, count: int = 1) -> list[str]:
    """Apply, roll back (``count``) or list (``list``) the migrations; the lines to print."""
    with database(environ) as url:
        if action == "apply":
            applied = apply(url)
            return [f"applied {len(applied)} migration(s)", *(f"  {m}" for m in applied)]
        if action == "rollback":
            undone = rollback(url, count)
            return [f"rolled back {len(undone)} migration(s)", *(f"  {m}" for m in undone)]
        return [
            f"{'applied' if done else 'pending'}  {migration}" for migration, done in status(url)
        ]
