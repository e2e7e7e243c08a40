"""One transaction on one pooled connection: the PostgreSQL unit of work and its repositories."""

import functools
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

import psycopg
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
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.session import UnitConnection
from ecp_postgres.tasks import PostgresTasks
from ecp_postgres.templates import PostgresTemplates
from ecp_postgres.transparency import PostgresTransparency
from ecp_postgres.webhooks import PostgresWebhooks


class PostgresEvidence(
    PostgresEvidenceStore, PostgresEvidenceTallies, PostgresProviderEvents, PostgresVersionEvidence
):
    """EvidenceRepository on PostgreSQL: the store's writes and each consumer's reads, one object."""


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


__all__ = ["PostgresEvidence", "PostgresUnitOfWork"]
