"""MeterRepository in memory."""

from datetime import datetime

from ecp_core.entitlements.model import Meter
from ecp_core.memory.tables import Repository


class MemoryMeters(Repository):
    """Units used per (tenant, meter, period start), in memory."""

    def _used(self, tenant_id: str, meter: Meter, period_start: datetime) -> int:
        found: int = self._t.table("meters").get((tenant_id, meter, period_start), 0)
        return found

    def lock(self, tenant_id: str, meter: Meter, period_start: datetime) -> int:
        """Units used (the store lock already serializes units of work)."""
        return self._used(tenant_id, meter, period_start)

    def _set(self, tenant_id: str, meter: Meter, period_start: datetime, used: int) -> int:
        self._t.put("meters", (tenant_id, meter, period_start), used)
        return used

    def add(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Take ``units`` more; the new usage."""
        used = self._used(tenant_id, meter, period_start) + units
        return self._set(tenant_id, meter, period_start, used)

    def subtract(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Return ``units``, stopping at 0; the new usage."""
        used = max(0, self._used(tenant_id, meter, period_start) - units)
        return self._set(tenant_id, meter, period_start, used)

    def usage(self, tenant_id: str, period_start: datetime) -> dict[Meter, int]:
        """Every meter the tenant used in the period."""
        return {
            meter: used
            for (tenant, meter, start), used in self._t.table("meters").items()
            if tenant == tenant_id and start == period_start and used > 0
        }
