"""MeterRepository on PostgreSQL: one row per (tenant, meter, period start), locked FOR UPDATE."""

from datetime import datetime

from ecp_core.entitlements.model import Meter
from ecp_postgres.rows import Repository

_KEY = "tenant_id = %s AND meter = %s AND period_start = %s"


class PostgresMeters(Repository):
    """Units used per (tenant, meter, period start)."""

    def _ensure(self, key: tuple[str, str, datetime]) -> None:
        """Create the row at 0 when missing; a concurrent first insert waits, then does nothing."""
        self._conn.execute(
            "INSERT INTO ecp_meters (tenant_id, meter, period_start, used) "
            "VALUES (%s, %s, %s, 0) ON CONFLICT DO NOTHING",
            key,
        )

    def lock(self, tenant_id: str, meter: Meter, period_start: datetime) -> int:
        """Units used, the row held until the transaction ends (created at 0 when missing)."""
        key = (tenant_id, meter.value, period_start)
        self._ensure(key)
        row = self._conn.execute(
            f"SELECT used FROM ecp_meters WHERE {_KEY} FOR UPDATE",  # noqa: S608 - fixed text
            key,
        ).fetchone()
        assert row is not None  # noqa: S101 - ensured above
        return int(row["used"])

    def _change(self, tenant_id: str, meter: Meter, period_start: datetime, delta: int) -> int:
        key = (tenant_id, meter.value, period_start)
        self._ensure(key)
        row = self._conn.execute(
            f"UPDATE ecp_meters SET used = GREATEST(0, used + %s) WHERE {_KEY} RETURNING used",  # noqa: S608
            (delta, *key),
        ).fetchone()
        assert row is not None  # noqa: S101 - ensured above
        return int(row["used"])

    def add(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Take ``units`` more; the new usage."""
        return self._change(tenant_id, meter, period_start, units)

    def subtract(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Return ``units``, stopping at 0; the new usage."""
        return self._change(tenant_id, meter, period_start, -units)

    def usage(self, tenant_id: str, period_start: datetime) -> dict[Meter, int]:
        """Every meter the tenant used in the period."""
        rows = self._conn.execute(
            "SELECT meter, used FROM ecp_meters WHERE tenant_id = %s AND period_start = %s "
            "AND used > 0",
            (tenant_id, period_start),
        ).fetchall()
        return {Meter(row["meter"]): int(row["used"]) for row in rows}
