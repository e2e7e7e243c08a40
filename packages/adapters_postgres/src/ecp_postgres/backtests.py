"""Backtests on PostgreSQL: the record as JSON beside the columns that find, order and claim it."""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from ecp_core.backtests.model import Backtest, BacktestStatus, SealedInputs
from ecp_core.errors import Conflict
from ecp_core.wire import structure, unstructure
from ecp_postgres.rows import Repository

LOCK_NAMESPACE = "ecp.backtests:"
"""Prefix of the advisory lock keys of tenants requesting backtests."""


def _calls(backtest: Backtest) -> int:
    metering = backtest.metering
    if backtest.status is BacktestStatus.FINISHED and metering.calls_used is not None:
        return metering.calls_used
    return metering.calls_reserved


def _record(row: dict[str, Any]) -> Backtest:
    return structure(row["record"], Backtest)


class PostgresBacktests(Repository):
    """BacktestRepository on PostgreSQL."""

    def lock_tenant(self, tenant_id: str) -> None:
        """A transaction-level advisory lock on the tenant's backtest requests."""
        self._conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (LOCK_NAMESPACE + json.dumps(tenant_id),),
        )

    def find(self, tenant_id: str, digests: Sequence[str]) -> Backtest | None:
        """The tenant's backtest whose request digest is one of ``digests``, or None."""
        row = self._conn.execute(
            "SELECT record FROM ecp_backtests WHERE tenant_id = %s AND request_digest = ANY(%s)"
            " ORDER BY created_at LIMIT 1",
            (tenant_id, list(digests)),
        ).fetchone()
        return None if row is None else _record(row)

    def add(self, backtest: Backtest, inputs: SealedInputs) -> None:
        """Store a new backtest with its sealed request; Conflict when its digest is taken."""
        cursor = self._conn.execute(
            "INSERT INTO ecp_backtests (backtest_id, tenant_id, request_digest, status,"
            " created_at, deadline_at, calls, record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (
                backtest.backtest_id,
                backtest.tenant_id,
                backtest.request_digest,
                backtest.status.value,
                backtest.created_at,
                backtest.deadline_at,
                _calls(backtest),
                Jsonb(unstructure(backtest)),
            ),
        )
        if cursor.rowcount != 1:
            raise Conflict("this backtest request is stored already")
        self._conn.execute(
            "INSERT INTO ecp_backtest_inputs (backtest_id, key_id, sealed) VALUES (%s, %s, %s)",
            (backtest.backtest_id, inputs.key_id, inputs.box),
        )

    def get(self, tenant_id: str, backtest_id: str, *, lock: bool = False) -> Backtest | None:
        """One of the tenant's backtests (row-locked with ``lock``)."""
        row = self._conn.execute(
            "SELECT record FROM ecp_backtests WHERE tenant_id = %s AND backtest_id = %s"  # noqa: S608 - fixed text
            + (" FOR UPDATE" if lock else ""),
            (tenant_id, backtest_id),
        ).fetchone()
        return None if row is None else _record(row)

    def page(
        self, tenant_id: str, *, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Backtest]:
        """Backtests newest first by (created_at, backtest_id)."""
        where, params = "tenant_id = %s", [tenant_id]
        if before is not None:
            where += " AND (created_at, backtest_id) < (%s, %s)"
            params += [before[0], before[1]]  # type: ignore[list-item]
        rows = self._conn.execute(
            f"SELECT record FROM ecp_backtests WHERE {where}"  # noqa: S608 - fixed text
            " ORDER BY created_at DESC, backtest_id DESC LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [_record(row) for row in rows]

    def calls_since(self, tenant_id: str, since: datetime) -> int:
        """Provider calls of the tenant's backtests created at or after ``since``."""
        row = self._conn.execute(
            "SELECT coalesce(sum(calls), 0) AS n FROM ecp_backtests"
            " WHERE tenant_id = %s AND created_at >= %s",
            (tenant_id, since),
        ).fetchone()
        return int(row["n"]) if row is not None else 0

    def claim(self, stale_before: datetime) -> tuple[Backtest, SealedInputs | None] | None:
        """The oldest queued backtest, or a running one whose deadline is before ``stale_before``."""
        row = self._conn.execute(
            "SELECT b.record, i.key_id, i.sealed FROM ecp_backtests b"
            # b's id is COLLATE "C", i's is not: compared under i's so that its key answers
            ' LEFT JOIN ecp_backtest_inputs i ON i.backtest_id = b.backtest_id COLLATE "default"'
            " WHERE b.status = 'queued' OR (b.status = 'running' AND b.deadline_at < %s)"
            " ORDER BY b.created_at, b.backtest_id LIMIT 1 FOR UPDATE OF b SKIP LOCKED",
            (stale_before,),
        ).fetchone()
        if row is None:
            return None
        sealed = (
            None
            if row["key_id"] is None
            else SealedInputs(key_id=row["key_id"], box=bytes(row["sealed"]))
        )
        return _record(row), sealed

    def save(self, backtest: Backtest) -> None:
        """Replace a stored backtest."""
        self._conn.execute(
            "UPDATE ecp_backtests SET status = %s, deadline_at = %s, calls = %s, record = %s"
            " WHERE backtest_id = %s",
            (
                backtest.status.value,
                backtest.deadline_at,
                _calls(backtest),
                Jsonb(unstructure(backtest)),
                backtest.backtest_id,
            ),
        )

    def drop_inputs(self, backtest_id: str) -> None:
        """Forget the sealed request."""
        self._conn.execute("DELETE FROM ecp_backtest_inputs WHERE backtest_id = %s", (backtest_id,))


__all__ = ["PostgresBacktests"]
