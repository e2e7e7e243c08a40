"""Which database to use: ``ECP_DATABASE_URL``, or an embedded server under ``ECP_DATA_DIR``."""

import contextlib
import os
from collections.abc import Iterator, Mapping

from ecp_postgres.embedded import EmbeddedPostgres

DEFAULT_DATA_DIR = ".ecp"


@contextlib.contextmanager
def database_url(environ: Mapping[str, str] | None = None) -> Iterator[str]:
    """Yield the database URL, starting (and finally stopping) the embedded server when needed.

    With ``ECP_DATABASE_URL`` set that server is used and nothing else changes. Without it a private
    PostgreSQL lives in ``$ECP_DATA_DIR/pg`` (default ``./.ecp/pg``) and is reused across restarts.
    """
    env = os.environ if environ is None else environ
    configured = env.get("ECP_DATABASE_URL")
    if configured:
        yield configured
        return
    with EmbeddedPostgres(env.get("ECP_DATA_DIR") or DEFAULT_DATA_DIR) as server:
        yield server.start()
