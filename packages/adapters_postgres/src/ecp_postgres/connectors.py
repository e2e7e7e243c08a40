"""Connectors on PostgreSQL: stored connectors, test cost scopes locked per row, tests, ledger.

A scope row is created on first use and locked ``FOR UPDATE`` for the rest of the transaction
(:meth:`PostgresConnectorCosts.lock_scope`), so concurrent tests of one scope reserve one after
the other (ADR 0044). Amounts are ``numeric``: exact, read back as Decimal. A test row's
``reserved_at`` is set while it holds a reservation, so the sweep of abandoned reservations
finds them by age on a partial index (ADR 0050).
"""

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from ecp_core.connectors.model import (
    BackendType,
    Connector,
    ConnectorCostEntry,
    ConnectorSource,
    ConnectorTest,
    CostScope,
    TrialState,
)
from ecp_core.errors import exists, missing
from ecp_core.wire import structure, unstructure
from ecp_postgres.rows import Repository

NO_RUN = ""
"""The run key of a scope without a run (a run id has at least one character)."""


def _run_key(run_id: str | None) -> str:
    return NO_RUN if run_id is None else run_id


def _reserved_at(test: ConnectorTest) -> datetime | None:
    """When a held reservation was made (the sweep's key); None once the test is finished."""
    return test.created_at if test.state is TrialState.RESERVED else None


def _connector(row: dict[str, Any]) -> Connector:
    return Connector(
        ref=row["ref"],
        backend_type=BackendType(row["backend_type"]),
        params=row["params"],
        source=ConnectorSource.API,
        tenant_id=row["tenant_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _scope(row: dict[str, Any]) -> CostScope:
    return CostScope(
        tenant_id=row["tenant_id"],
        campaign_id=row["campaign_id"],
        run_id=None if row["run_key"] == NO_RUN else row["run_key"],
        committed_usd=row["committed_usd"],
        reserved_usd=row["reserved_usd"],
    )


_CONNECTOR_COLUMNS = "tenant_id, ref, backend_type, params, created_at, updated_at"
_SCOPE_COLUMNS = "tenant_id, campaign_id, run_key, committed_usd, reserved_usd"


class PostgresConnectors(Repository):
    """ConnectorRepository on PostgreSQL."""

    def add(self, connector: Connector) -> None:
        """Store a new connector; Conflict when the tenant has one with its ref."""
        cursor = self._conn.execute(
            f"INSERT INTO ecp_connectors ({_CONNECTOR_COLUMNS})"  # noqa: S608 - fixed text
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                connector.tenant_id,
                connector.ref,
                connector.backend_type.value,
                Jsonb(connector.params),
                connector.created_at,
                connector.updated_at,
            ),
        )
        if cursor.rowcount != 1:
            raise exists("connector", connector.ref)

    def get(self, tenant_id: str, ref: str) -> Connector | None:
        """The tenant's connector called ``ref``, or None."""
        row = self._conn.execute(
            f"SELECT {_CONNECTOR_COLUMNS} FROM ecp_connectors WHERE tenant_id = %s AND ref = %s",  # noqa: S608 - fixed text
            (tenant_id, ref),
        ).fetchone()
        return None if row is None else _connector(row)

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Connector]:
        """The tenant's connectors by ref (code point order), after ``after`` when given."""
        rows = self._conn.execute(
            f"SELECT {_CONNECTOR_COLUMNS} FROM ecp_connectors"  # noqa: S608 - fixed text
            " WHERE tenant_id = %s AND (%s::text IS NULL OR ref > %s) ORDER BY ref LIMIT %s",
            (tenant_id, after, after, limit),
        ).fetchall()
        return [_connector(row) for row in rows]

    def replace(self, connector: Connector) -> None:
        """Replace a stored connector; NotFound when there is none with its ref."""
        cursor = self._conn.execute(
            "UPDATE ecp_connectors SET backend_type = %s, params = %s, updated_at = %s"
            " WHERE tenant_id = %s AND ref = %s",
            (
                connector.backend_type.value,
                Jsonb(connector.params),
                connector.updated_at,
                connector.tenant_id,
                connector.ref,
            ),
        )
        if cursor.rowcount != 1:
            raise missing("connector", connector.ref)

    def remove(self, tenant_id: str, ref: str) -> bool:
        """Delete the tenant's connector called ``ref``; whether there was one."""
        cursor = self._conn.execute(
            "DELETE FROM ecp_connectors WHERE tenant_id = %s AND ref = %s", (tenant_id, ref)
        )
        return cursor.rowcount == 1


class PostgresConnectorCosts(Repository):
    """ConnectorCostRepository on PostgreSQL."""

    def lock_scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope:
        """The scope's row, created at zero when new, locked until the transaction ends."""
        key = (tenant_id, campaign_id, _run_key(run_id))
        self._conn.execute(
            "INSERT INTO ecp_connector_cost_scopes (tenant_id, campaign_id, run_key)"
            " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            key,
        )
        row = self._conn.execute(
            f"SELECT {_SCOPE_COLUMNS} FROM ecp_connector_cost_scopes"  # noqa: S608 - fixed text
            " WHERE tenant_id = %s AND campaign_id = %s AND run_key = %s FOR UPDATE",
            key,
        ).fetchone()
        assert row is not None  # noqa: S101 - inserted or present, and never deleted
        return _scope(row)

    def scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope | None:
        """The scope's totals as committed, without a lock; None when it has none."""
        row = self._conn.execute(
            f"SELECT {_SCOPE_COLUMNS} FROM ecp_connector_cost_scopes"  # noqa: S608 - fixed text
            " WHERE tenant_id = %s AND campaign_id = %s AND run_key = %s",
            (tenant_id, campaign_id, _run_key(run_id)),
        ).fetchone()
        return None if row is None else _scope(row)

    def save_scope(self, scope: CostScope) -> None:
        """Write the totals of a scope this transaction locked."""
        self._conn.execute(
            "UPDATE ecp_connector_cost_scopes SET committed_usd = %s, reserved_usd = %s"
            " WHERE tenant_id = %s AND campaign_id = %s AND run_key = %s",
            (
                scope.committed_usd,
                scope.reserved_usd,
                scope.tenant_id,
                scope.campaign_id,
                _run_key(scope.run_id),
            ),
        )

    def find_test(
        self, tenant_id: str, campaign_id: str, operation_id: str
    ) -> ConnectorTest | None:
        """The stored test of (tenant, campaign, operation), or None."""
        row = self._conn.execute(
            "SELECT record FROM ecp_connector_tests"
            " WHERE tenant_id = %s AND campaign_id = %s AND operation_id = %s",
            (tenant_id, campaign_id, operation_id),
        ).fetchone()
        return None if row is None else structure(row["record"], ConnectorTest)

    def add_test(self, test: ConnectorTest) -> None:
        """Store a new test; Conflict when its (tenant, campaign, operation) is taken."""
        cursor = self._conn.execute(
            "INSERT INTO ecp_connector_tests"
            " (tenant_id, campaign_id, operation_id, record, run_key, reserved_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                test.tenant_id,
                test.campaign_id,
                test.operation_id,
                Jsonb(unstructure(test)),
                _run_key(test.run_id),
                _reserved_at(test),
            ),
        )
        if cursor.rowcount != 1:
            raise exists("connector test", f"{test.campaign_id}/{test.operation_id}")

    def save_test(self, test: ConnectorTest) -> None:
        """Replace a stored test (its state and answer)."""
        self._conn.execute(
            "UPDATE ecp_connector_tests SET record = %s, reserved_at = %s"
            " WHERE tenant_id = %s AND campaign_id = %s AND operation_id = %s",
            (
                Jsonb(unstructure(test)),
                _reserved_at(test),
                test.tenant_id,
                test.campaign_id,
                test.operation_id,
            ),
        )

    def claim_abandoned(self, reserved_before: datetime, limit: int) -> list[ConnectorTest]:
        """Reserved tests created before ``reserved_before``, oldest first, scopes held.

        ``FOR UPDATE SKIP LOCKED`` over the test and its scope row: what another transaction
        holds (a live test settling, another sweeper) is left for a later pass.
        """
        rows = self._conn.execute(
            "SELECT t.record FROM ecp_connector_tests t"
            " JOIN ecp_connector_cost_scopes s ON s.tenant_id = t.tenant_id"
            " AND s.campaign_id = t.campaign_id AND s.run_key = t.run_key"
            " WHERE t.reserved_at < %s"
            ' ORDER BY t.reserved_at, t.tenant_id COLLATE "C", t.campaign_id COLLATE "C",'
            ' t.operation_id COLLATE "C" LIMIT %s FOR UPDATE OF t, s SKIP LOCKED',
            (reserved_before, limit),
        ).fetchall()
        return [structure(row["record"], ConnectorTest) for row in rows]

    def add_entry(self, tenant_id: str, entry: ConnectorCostEntry) -> None:
        """Append a committed cost to the ledger."""
        cursor = self._conn.execute(
            "INSERT INTO ecp_connector_costs"
            " (tenant_id, cost_event_id, campaign_id, run_key, amount_usd, record)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                tenant_id,
                entry.cost_event_id,
                entry.campaign_id,
                _run_key(entry.run_id),
                entry.amount_usd,
                Jsonb(unstructure(entry)),
            ),
        )
        if cursor.rowcount != 1:
            raise exists("connector cost", entry.cost_event_id)

    def entries(
        self,
        tenant_id: str,
        campaign_id: str,
        run_id: str | None,
        *,
        limit: int,
        after: str | None = None,
    ) -> list[ConnectorCostEntry]:
        """The scope's ledger by cost_event_id (code point order), after ``after`` when given."""
        rows = self._conn.execute(
            "SELECT record FROM ecp_connector_costs"
            " WHERE tenant_id = %s AND campaign_id = %s AND run_key = %s"
            " AND (%s::text IS NULL OR cost_event_id > %s) ORDER BY cost_event_id LIMIT %s",
            (tenant_id, campaign_id, _run_key(run_id), after, after, limit),
        ).fetchall()
        return [structure(row["record"], ConnectorCostEntry) for row in rows]


__all__ = ["PostgresConnectorCosts", "PostgresConnectors"]
