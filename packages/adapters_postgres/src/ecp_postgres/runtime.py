"""Which database to use: the URL given, or an embedded server under the data directory given.

The adapter reads no environment: the composition root passes the URL and the directory.
"""

import contextlib
import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg

from ecp_postgres.embedded import EmbeddedPostgres
from ecp_postgres.errors import DatabaseUnavailable


@contextlib.contextmanager
def database_url(configured: str | None, data_dir: str | os.PathLike[str]) -> Iterator[str]:
    """Yield the database URL, starting (and finally stopping) the embedded server when needed.

    With ``configured`` (a URL) that server is used and nothing else changes. Without it a private
    PostgreSQL lives in ``data_dir/pg`` and is reused across restarts; a start that fails raises
    :class:`DatabaseUnavailable`.
    """
    if configured:
        yield configured
        return
    with EmbeddedPostgres(data_dir) as server:
        yield server.start()


def check_database(url: str, timeout_seconds: int = 10) -> None:
    """Connect once; raise :class:`DatabaseUnavailable` with the driver's first line if that fails."""
    try:
        with psycopg.connect(url, connect_timeout=timeout_seconds):
            pass
    except psycopg.Error as exc:
        lines = str(exc).strip().splitlines()
        reason = lines[0] if lines else type(exc).__name__
        with contextlib.suppress(ValueError):
            password = urlsplit(url).password
            if password:
                reason = reason.replace(password, "***")
        raise DatabaseUnavailable(f"cannot reach the database: {reason}") from None
