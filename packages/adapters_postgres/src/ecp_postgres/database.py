"""The connection pool and the PostgreSQL unit of work, over one module per storage area.

The pool checks each connection before handing it out and drops broken ones, and a request for a
connection waits at most ``timeout`` seconds. A unit of work translates driver errors that mean
the database is away into :class:`~ecp_core.errors.DatabaseUnavailable` (see
:func:`ecp_postgres.errors.unavailable`), on entry, at commit and on exit, whatever port raised.
"""

import functools
import time
import urllib.parse
from collections.abc import Callable
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
from ecp_postgres.rollouts import PostgresRollouts
from ecp_postgres.rows import load_json
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.session import UnitConnection
from ecp_postgres.tasks import PostgresTasks
from ecp_postgres.templates import PostgresTemplates
from ecp_postgres.transparency import PostgresTransparency
from ecp_postgres.webhooks import PostgresWebhooks

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


class PostgresUnitOfWork:
    """One transaction on one pooled connection; leaving without commit rolls back.

    A driver error meaning the database is away leaves it as DatabaseUnavailable: raised by the
    body (any port), the commit or the rollback. A rollback on a lost connection is skipped: the
    server dropped the transaction with the session.
    """

    def __init__(
        self,
        pool: ConnectionPool[UnitConnection],
        graph_cache: GraphCache,
        distrust: Callable[[], None] = lambda: None,
    ) -> None:
        """Bind to ``pool``; the connection is taken on entry.

        ``distrust`` is called when the connection turns out lost, so that the pool checks the
        others before handing them out again.
        """
        self._pool = pool
        self._graph_cache = graph_cache
        self._distrust = distrust

    def __enter__(self) -> Self:
        """Take a connection; each repository is bound to it on first use."""
        try:
            self._conn = self._pool.getconn()
        except psycopg.OperationalError as exc:  # PoolTimeout, PoolClosed
            translated = unavailable(exc)
            if translated is None:
                raise
            raise translated from exc
        return self

    @functools.cached_property
    def graphs(self) -> PostgresGraphs:
        """The graphs of this unit of work (made on first use)."""
        return PostgresGraphs(self._conn, self._graph_cache)

    @functools.cached_property
    def deployments(self) -> PostgresDeployments:
        """The deployments of this unit of work (made on first use)."""
        return PostgresDeployments(self._conn)

    @functools.cached_property
    def policies(self) -> PostgresPolicies:
        """The policies of this unit of work (made on first use)."""
        return PostgresPolicies(self._conn)

    @functools.cached_property
    def contracts(self) -> PostgresContracts:
        """The contracts of this unit of work (made on first use)."""
        return PostgresContracts(self._conn)

    @functools.cached_property
    def api_keys(self) -> PostgresApiKeys:
        """The api keys of this unit of work (made on first use)."""
        return PostgresApiKeys(self._conn)

    @functools.cached_property
    def runs(self) -> PostgresRuns:
        """The runs of this unit of work (made on first use)."""
        return PostgresRuns(self._conn)

    @functools.cached_property
    def approvals(self) -> PostgresApprovals:
        """The approvals of this unit of work (made on first use)."""
        return PostgresApprovals(self._conn)

    @functools.cached_property
    def audit(self) -> PostgresAudit:
        """The audit of this unit of work (made on first use)."""
        return PostgresAudit(self._conn)

    @functools.cached_property
    def retention(self) -> PostgresRetention:
        """The retention of this unit of work (made on first use)."""
        return PostgresRetention(self._conn)

    @functools.cached_property
    def webhooks(self) -> PostgresWebhooks:
        """The webhooks of this unit of work (made on first use)."""
        return PostgresWebhooks(self._conn)

    @functools.cached_property
    def tasks(self) -> PostgresTasks:
        """The tasks of this unit of work (made on first use)."""
        return PostgresTasks(self._conn)

    @functools.cached_property
    def subscriptions(self) -> PostgresSubscriptions:
        """The subscriptions of this unit of work (made on first use)."""
        return PostgresSubscriptions(self._conn)

    @functools.cached_property
    def meters(self) -> PostgresMeters:
        """The meters of this unit of work (made on first use)."""
        return PostgresMeters(self._conn)

    @functools.cached_property
    def identity_bindings(self) -> PostgresIdentityBindings:
        """The identity bindings of this unit of work (made on first use)."""
        return PostgresIdentityBindings(self._conn)

    @functools.cached_property
    def merchant_events(self) -> PostgresMerchantEvents:
        """The merchant events of this unit of work (made on first use)."""
        return PostgresMerchantEvents(self._conn)

    @functools.cached_property
    def evidence(self) -> PostgresEvidence:
        """The evidence of this unit of work (made on first use)."""
        return PostgresEvidence(self._conn)

    @functools.cached_property
    def reconciliation(self) -> PostgresReconciliation:
        """The reconciliation of this unit of work (made on first use)."""
        return PostgresReconciliation(self._conn)

    @functools.cached_property
    def decisions(self) -> PostgresDecisions:
        """The decisions of this unit of work (made on first use)."""
        return PostgresDecisions(self._conn)

    @functools.cached_property
    def backtests(self) -> PostgresBacktests:
        """The backtests of this unit of work (made on first use)."""
        return PostgresBacktests(self._conn)

    @functools.cached_property
    def connectors(self) -> PostgresConnectors:
        """The connectors of this unit of work (made on first use)."""
        return PostgresConnectors(self._conn)

    @functools.cached_property
    def connector_costs(self) -> PostgresConnectorCosts:
        """The connector costs of this unit of work (made on first use)."""
        return PostgresConnectorCosts(self._conn)

    @functools.cached_property
    def transparency(self) -> PostgresTransparency:
        """The transparency logs."""
        return PostgresTransparency(self._conn)

    @functools.cached_property
    def rollouts(self) -> PostgresRollouts:
        """The rollouts of this unit of work (made on first use)."""
        return PostgresRollouts(self._conn)

    @functools.cached_property
    def templates(self) -> PostgresTemplates:
        """The templates of this unit of work (made on first use)."""
        return PostgresTemplates(self._conn)

    @functools.cached_property
    def attestations(self) -> PostgresAttestations:
        """The attestations of this unit of work (made on first use)."""
        return PostgresAttestations(self._conn)

    @functools.cached_property
    def certifications(self) -> PostgresCertifications:
        """The certifications of this unit of work (made on first use)."""
        return PostgresCertifications(self._conn)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back what was not committed and return the connection (a broken one is dropped)."""
        conn = self._conn
        rolled_back = False
        try:
            conn.rollback()
            rolled_back = True
        except psycopg.Error as failed:
            if unavailable(failed, conn) is None:
                self._pool.putconn(conn)
                raise
        translated = None if exc is None else unavailable(exc, conn)
        if rolled_back and translated is None and not conn.broken:
            conn.returned_at = time.monotonic()
        else:
            self._distrust()
        self._pool.putconn(conn)
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
