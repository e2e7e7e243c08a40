"""The entitlements port: meters per tenant and billing period."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.billing import WithSubscriptions
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.entitlements.model import Meter


class MeterRepository(Protocol):
    """Units used of each meter, per tenant and billing period (keyed by the period's start).

    A meter never read before holds 0. Usage never goes below 0.
    """

    def lock(self, tenant_id: str, meter: Meter, period_start: datetime) -> int:
        """Units used, the meter held until the unit of work ends (concurrent takers wait)."""
        ...

    def add(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Take ``units`` (>= 0) more; the new usage."""
        ...

    def subtract(self, tenant_id: str, meter: Meter, period_start: datetime, units: int) -> int:
        """Return ``units`` (>= 0), stopping at 0; the new usage."""
        ...

    def usage(self, tenant_id: str, period_start: datetime) -> dict[Meter, int]:
        """Every meter the tenant used in the period (meters never used are absent)."""
        ...


class WithMeters(Protocol):
    """A unit of work that reaches the meters."""

    @property
    def meters(self) -> MeterRepository:
        """The meters."""
        ...


class EntitlementsUnit(Transaction, WithMeters, WithSubscriptions, Protocol):
    """What enforcing entitlements needs: the tenant's subscription and its meters."""


__all__ = ["EntitlementsUnit", "MeterRepository", "WithMeters"]
