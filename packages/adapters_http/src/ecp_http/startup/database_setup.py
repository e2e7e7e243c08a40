"""The database a command uses, and ``ecp migrate``'s work on it.

Kept apart from the composition root so that ``ecp migrate`` imports the migrations and the
driver only, not the application (ADR 0053): listing the state answers at once while a server
runs, and takes no lock (ADR 0022).
"""

import contextlib
import pathlib
from collections.abc import Iterator, Mapping

from ecp_http.config.table.serving import DATA_DIR, DATABASE_URL
from ecp_postgres.migrations import apply, rollback, schema_state
from ecp_postgres.runtime import check_database, database_url


@contextlib.contextmanager
def database(configured: str | None, data_dir: pathlib.Path) -> Iterator[str]:
    """The database URL, checked reachable: ``configured``, else the embedded server.

    The embedded PostgreSQL lives under ``data_dir`` and stops when the block ends (unless
    another process, a running server, still uses it). Raises DatabaseUnavailable with one line
    when the database cannot be reached.
    """
    with database_url(configured, data_dir) as url:
        check_database(url)
        yield url


def migrate(environ: Mapping[str, str], action: str, count: int = 1) -> list[str]:
    """Apply, roll back (``count``) or list (``list``) the migrations; the lines to print.

    Only the two database settings of ``environ`` are read, through their declarations.
    """
    with database(DATABASE_URL.read(environ), DATA_DIR.read(environ)) as url:
        if action == "apply":
            applied = apply(url)
            return [f"applied {len(applied)} migration(s)", *(f"  {m}" for m in applied)]
        if action == "rollback":
            undone = rollback(url, count)
            return [f"rolled back {len(undone)} migration(s)", *(f"  {m}" for m in undone)]
        state = schema_state(url)
        return [
            *(f"{'applied' if done else 'pending'}  {m}" for m, done in state.migrations),
            *(
                f"newer    {m}  (applied by a newer release; unknown to this one)"
                for m in state.unknown
            ),
        ]
