"""The connection pool and the PostgreSQL unit of work, over one module per storage area.

The pool checks each connection before handing it out and drops broken ones, and a request for a
connection waits at most ``timeout`` seconds. A unit of work translates driver errors that mean
the database is away into :class:`~ecp_core.errors.DatabaseUnavailable` (see
:func:`ecp_postgres.errors.unavailable`), on entry, at commit and on exit, whatever port raised.
"""

import urllib.parse
from types import TracebackType
from typing import Any, Self

import psycopg
import psycopg.sql
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool

from ecp_postgres.accounts import PostgresIdentityBindings
from ecp_postgres.api_keys import PostgresApiKeys
from ecp_postgres.approvals import PostgresApprovals
from ecp_postgres.attestations import PostgresAttestations
from ecp_postgres.audit import PostgresAudit
from ecp_postgres.backtests import PostgresBacktests
from ecp_postgres.billing import PostgresMerchantEvents, PostgresSubscriptions
from ecp_postgres.certification import PostgresCertifications
from ecp_postgres.connectors import PostgresConnectorCosts, PostgresConnectors
from ecp_postgres.contracts import PostgresContracts
from ecp_postgres.debugger import PostgresEvidenceTallies
from ecp_postgres.decisions import PostgresDecisions, PostgresVersionEvidence
from ecp_postgres.deployments import PostgresDeployments
from ecp_postgres.entitlements import PostgresMeters
from ecp_postgres.errors import unavailable
from ecp_postgres.evidence import PostgresEvidenceStore
from ecp_postgres.graphs import GraphCache, PostgresGraphs
from ecp_postgres.policies import PostgresPolicies
from ecp_postgres.reconciliation import PostgresProviderEvents, PostgresReconciliation
from ecp_postgres.retention import PostgresRetention
from ecp_postgres.rows import load_json
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.tasks import PostgresTasks
from ecp_postgres.templates import PostgresTemplates
from ecp_postgres.webhooks import PostgresWebhooks

POOL_TIMEOUT_SECONDS = 5.0
"""How long a unit of work waits for a connection by default (the pool's own default is 30)."""

RECONNECT_SECONDS = 5.0
"""How long one chain of reconnection attempts lasts (1 s, 2 s, 4 s … apart) before it gives up.

Kept short so that the next demand starts a new chain from a 1 s delay: the pool finds a returned
database within about 2 s, however long it was away (psycopg_pool's default is 300 s).
"""


class PostgresEvidence(
    PostgresEvidenceStore, PostgresEvidenceTallies, PostgresProviderEvents, PostgresVersionEvidence
):
    """EvidenceRepository on PostgreSQL: the store's writes and each consumer's reads, one object."""


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
    ) -> None:
        """Open a pool to ``url`` (a libpq connection string or URL).

        ``timeout``: seconds a unit of work waits for a connection before DatabaseUnavailable.
        """
        self.url = url
        self.pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={
                "row_factory": dict_row,
                "autocommit": False,
                # Sessions in UTC: timestamps read back as UTC, as the models require.
                "options": "-c TimeZone=UTC",
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

    def _check(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Before a connection is handed out: an empty statement; a broken one is dropped.

        One broken connection means the server went away (stopped, restarted, sessions killed):
        every idle one is checked at once, so that the next try takes a fresh connection instead
        of backing off past each stale one in turn.
        """
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error:
            self.pool.check()
            raise

    def unit_of_work(self) -> "PostgresUnitOfWork":
        """A fresh unit of work: one connection, one transaction."""
        return PostgresUnitOfWork(self.pool, self.graph_cache)

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


class PostgresUnitOfWork:
    """One transaction on one pooled connection; leaving without commit rolls back.

    A driver error meaning the database is away leaves it as DatabaseUnavailable: raised by the
    body (any port), the commit or the rollback. A rollback on a lost connection is skipped: the
    server dropped the transaction with the session.
    """

    def __init__(
        self, pool: ConnectionPool[psycopg.Connection[dict[str, Any]]], graph_cache: GraphCache
    ) -> None:
        """Bind to ``pool``; the connection is taken on entry."""
        self._pool = pool
        self._graph_cache = graph_cache

    def __enter__(self) -> Self:
        """Take a connection and bind the repositories to it."""
        try:
            self._conn = self._pool.getconn()
        except psycopg.OperationalError as exc:  # PoolTimeout, PoolClosed
            translated = unavailable(exc)
            if translated is None:
                raise
            raise translated from exc
        conn = self._conn
        self.graphs = PostgresGraphs(conn, self._graph_cache)
        self.deployments = PostgresDeployments(conn)
        self.policies = PostgresPolicies(conn)
        self.contracts = PostgresContracts(conn)
        self.api_keys = PostgresApiKeys(conn)
        self.runs = PostgresRuns(conn)
        self.approvals = PostgresApprovals(conn)
        self.audit = PostgresAudit(conn)
        self.retention = PostgresRetention(conn)
        self.webhooks = PostgresWebhooks(conn)
        self.tasks = PostgresTasks(conn)
        self.subscriptions = PostgresSubscriptions(conn)
        self.meters = PostgresMeters(conn)
        self.identity_bindings = PostgresIdentityBindings(conn)
        self.merchant_events = PostgresMerchantEvents(conn)
        self.evidence = PostgresEvidence(conn)
        self.reconciliation = PostgresReconciliation(conn)
        self.decisions = PostgresDecisions(conn)
        self.backtests = PostgresBacktests(conn)
        self.connectors = PostgresConnectors(conn)
        self.connector_costs = PostgresConnectorCosts(conn)
        self.templates = PostgresTemplates(conn)
        self.attestations = PostgresAttestations(conn)
        self.certifications = PostgresCertifications(conn)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back what was not committed and return the connection (a broken one is dropped)."""
        conn = self._conn
        try:
            conn.rollback()
        except psycopg.Error as failed:
            if unavailable(failed, conn) is None:
                raise
        finally:
            self._pool.putconn(conn)
        if exc is not None:
            translated = unavailable(exc, conn)
            if translated is not None:
                raise translated from exc

    def commit(self) -> None:
        """Commit the transaction (the next statement starts a new one)."""
        self._conn.commit()


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
