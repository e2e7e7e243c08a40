"""Which database to use: ``ECP_DATABASE_URL``, or an embedded server under ``ECP_DATA_DIR``."""

import contextlib
import os
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

import psycopg

from ecp_postgres.embedded import EmbeddedPostgres
from ecp_postgres.errors import DatabaseUnavailable

DEFAULT_DATA_DIR = ".ecp"


@contextlib.contextmanager
def database_url(environ: Mapping[str, str] | None = None) -> Iterator[str]:
    """Yield the database URL, starting (and finally stopping) the embedded server when needed.

    With ``ECP_DATABASE_URL`` set that server is used and nothing else changes. Without it a private
    PostgreSQL lives in ``$ECP_DATA_DIR/pg`` (default ``./.ecp/pg``) and is reused across restarts;
    a start that fails raises :class:`DatabaseUnavailable`.
    """
    env = os.environ if environ is None else environ
    configured = env.get("ECP_DATABASE_URL")
    if configured:
        yield configured
        return
    with EmbeddedPostgres(env.get("ECP_DATA_DIR") or DEFAULT_DATA_DIR) as server:
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
