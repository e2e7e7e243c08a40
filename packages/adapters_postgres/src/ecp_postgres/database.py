"""The connection pool and the PostgreSQL unit of work, over one module per storage area.

The pool checks each connection before handing it out and drops broken ones, and a request for a
connection waits at most ``timeout`` seconds. A unit of work translates driver errors that mean
the database is away into :class:`~ecp_core.errors.DatabaseUnavailable` (see
:func:`ecp_postgres.errors.unavailable`), on entry, at commit and on exit, whatever port raised.
"""

import time
import urllib.parse
from types import TracebackType
from typing import Any, Self

import psycopg
import psycopg.sql
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool

from ecp_postgres.graphs import GraphCache
from ecp_postgres.rows import load_json
from ecp_postgres.session import UnitConnection
from ecp_postgres.shared import SharedPostgresTransaction
from ecp_postgres.unit import PostgresUnitOfWork

POOL_TIMEOUT_SECONDS = 5.0
"""How long a unit of work waits for a connection by default (the pool's own default is 30)."""

FRESH_SECONDS = 1.0
"""A connection returned cleanly this recently is handed out again without a check round trip.

Its server answered a moment ago; were it gone since, the first statement fails and the unit of
work reports DatabaseUnavailable, as any failure during a transaction does (ADR 0059).
"""

RECONNECT_SECONDS = 5.0
"""How long one chain of reconnection attempts lasts (1 s, 2 s, 4 s … apart) before it gives up.

Kept short so that the next demand starts a new chain from a 1 s delay: the pool finds a returned
database within about 2 s, however long it was away (psycopg_pool's default is 300 s).
"""


class _NewestFirst(ConnectionPool[UnitConnection]):
    """A pool that hands out the connection returned last (psycopg_pool's takes the oldest).

    Under a steady load the same few connections go round, each returned a moment ago, so they
    skip the check (:data:`FRESH_SECONDS`) instead of paying an empty statement each time the
    queue brings back one idle for longer (ADR 0099); the rest stay idle and the pool may shrink.
    """

    def _get_ready_connection(self, timeout: float | None) -> UnitConnection | None:
        if self._pool:
            self._pool.rotate(1)  # the newest (right end) to the front, which the base takes
        return super()._get_ready_connection(timeout)


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Per connection: JSON read by :func:`load_json`, which keeps accepted numbers' values."""
    set_json_loads(load_json, conn)


class PostgresStore:
    """A pool of connections to one database; :meth:`unit_of_work` is the UnitOfWorkFactory."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = POOL_TIMEOUT_SECONDS,
        notify: bool = True,
    ) -> None:
        """Open a pool to ``url`` (a libpq connection string or URL).

        ``timeout``: seconds a unit of work waits for a connection before DatabaseUnavailable.
        ``notify=False`` sets ``ecp.notify=off`` on every session: its writes wake no listener
        (ADR 0063), and the commits skip the cost of notifying.
        """
        self.url = url
        self.pool: ConnectionPool[UnitConnection] = _NewestFirst(
            url,
            connection_class=UnitConnection,
            min_size=min_size,
            max_size=max_size,
            kwargs={
                "row_factory": dict_row,
                "autocommit": False,
                # Sessions in UTC: timestamps read back as UTC, as the models require.
                "options": "-c TimeZone=UTC" + ("" if notify else " -c ecp.notify=off"),
                # An unreachable host fails a connection attempt instead of hanging it.
                "connect_timeout": max(2, round(timeout)),
            },
            configure=_configure,
            check=self._check,
            timeout=timeout,
            reconnect_timeout=RECONNECT_SECONDS,
            open=True,
        )
        self.graph_cache = GraphCache()
        self._trusted_since = time.monotonic()
        """Connections returned before this instant are checked before use (:meth:`_distrust`)."""

    def _check(self, conn: UnitConnection) -> None:
        """Before a connection is handed out: an empty statement; a broken one is dropped.

        Skipped for a connection returned cleanly within :data:`FRESH_SECONDS`.

        One broken connection means the server went away (stopped, restarted, sessions killed):
        every idle one is checked at once, so that the next try takes a fresh connection instead
        of backing off past each stale one in turn.
        """
        if (
            conn.returned_at > self._trusted_since
            and time.monotonic() - conn.returned_at < FRESH_SECONDS
        ):
            return
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error:
            self.pool.check()
            raise

    def unit_of_work(self) -> "PostgresUnitOfWork":
        """A fresh unit of work: one connection, one transaction."""
        return PostgresUnitOfWork(self.pool, self.graph_cache, self._distrust)

    def shared_transaction(self) -> SharedPostgresTransaction:
        """A transaction whose units of work are savepoints, committed once (ADR 0102)."""
        return SharedPostgresTransaction(self.pool, self.graph_cache, self._distrust)

    def _distrust(self) -> None:
        """A connection failed: check every connection again before it is handed out."""
        self._trusted_since = time.monotonic()

    def close(self) -> None:
        """Close every connection."""
        self.pool.close()

    def __enter__(self) -> Self:
        """Use as a context manager that closes the pool."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the pool."""
        self.close()


def with_database(url: str, name: str) -> str:
    """``url`` (a ``postgresql://`` URL) pointed at database ``name``."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + urllib.parse.quote(name)))


def create_database(url: str, name: str, *, template: str | None = None) -> str:
    """Create database ``name`` on the server of ``url`` (from ``template``); return its URL."""
    with psycopg.connect(url, autocommit=True) as conn:
        ident = psycopg.sql.Identifier(name)
        if template is None:
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(ident))
        else:
            source = psycopg.sql.Identifier(template)
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(ident, source))
    return with_database(url, name)


def drop_database(url: str, name: str) -> None:
    """Drop database ``name`` (closing other sessions on it) when it exists."""
    with psycopg.connect(url, autocommit=True) as conn:
        ident = psycopg.sql.Identifier(name)
        conn.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
