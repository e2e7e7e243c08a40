"""Enforcing entitlements inside the unit of work of the metered work, and reading usage.

Every method that changes a meter runs inside the caller's unit of work: the units taken commit
or roll back with the work they pay for, and a refusal raises before any meter moves. Meters are
locked in one fixed order, so two reservations of several meters never wait on each other.
"""

from collections.abc import Callable, Mapping

from ecp_core.entitlements.model import AccountUsage, Entitlement, Meter, Reservation
from ecp_core.entitlements.rules import (
    account_usage,
    admit,
    admit_schedule,
    entitlement_of,
    period_of,
)
from ecp_core.ports.entitlements import EntitlementsUnit
from ecp_core.ports.system import Clock


class Entitlements:
    """The plans' quotas over the tenants' meters: enforced by the services that hold it.

    The core always builds one (the account page reads usage through it) and hands it to the
    metering services only when enforcement is enabled.
    """

    def __init__(self, uow: Callable[[], EntitlementsUnit], clock: Clock) -> None:
        """Wire the service; ``uow`` serves only the reads of :meth:`usage`."""
        self._uow = uow
        self._clock = clock

    def current(self, uow: EntitlementsUnit, tenant_id: str) -> Entitlement:
        """The tenant's entitlement now; SubscriptionInactive (402) when it has none."""
        return entitlement_of(uow.subscriptions.get(tenant_id), self._clock.now())

    def reserve(
        self, uow: EntitlementsUnit, tenant_id: str, units: Mapping[Meter, int]
    ) -> Reservation:
        """Take ``units`` of each meter in the current period, all or none.

        SubscriptionInactive (402) without a live subscription; QuotaExhausted (429) when one
        meter would pass its allowance, and then no meter moves. Zero units check the
        subscription only.
        """
        now = self._clock.now()
        entitlement = entitlement_of(uow.subscriptions.get(tenant_id), now)
        start = entitlement.period.start
        wanted = {meter: count for meter, count in sorted(units.items()) if count > 0}
        for meter, count in wanted.items():
            admit(entitlement, meter, uow.meters.lock(tenant_id, meter, start), count, now)
        for meter, count in wanted.items():
            uow.meters.add(tenant_id, meter, start, count)
        return Reservation(tenant_id=tenant_id, period_start=start, units=wanted)

    def commit(
        self, uow: EntitlementsUnit, reservation: Reservation, used: Mapping[Meter, int]
    ) -> None:
        """Keep the units ``used`` of a reservation and return the rest to its period's meters.

        A meter ``used`` does not name is kept whole; more than was reserved is kept as reserved.
        """
        for meter, reserved in sorted(reservation.units.items()):
            unused = reserved - min(used.get(meter, reserved), reserved)
            if unused > 0:
                uow.meters.subtract(reservation.tenant_id, meter, reservation.period_start, unused)

    def release(self, uow: EntitlementsUnit, reservation: Reservation) -> None:
        """Return every unit of a reservation (the work it paid for did not happen)."""
        self.commit(uow, reservation, dict.fromkeys(reservation.units, 0))

    def admit_schedule(
        self,
        uow: EntitlementsUnit,
        tenant_id: str,
        interval_seconds: int,
        live: Callable[[], int],
    ) -> None:
        """Allow one more decision schedule; ``live`` counts the tenant's schedules.

        The subscription is locked first, so concurrent creations count one after another.
        """
        now = self._clock.now()
        entitlement = entitlement_of(uow.subscriptions.lock(tenant_id), now)
        admit_schedule(entitlement, live(), interval_seconds, now)

    def usage(self, tenant_id: str, *, live_schedules: int) -> AccountUsage | None:
        """The tenant's plan, state, period and meters; None when it has no subscription."""
        now = self._clock.now()
        with self._uow() as uow:
            subscription = uow.subscriptions.get(tenant_id)
            if subscription is None:
                return None
            used = uow.meters.usage(tenant_id, period_of(subscription, now).start)
        return account_usage(subscription, now, used, live_schedules)


__all__ = ["Entitlements"]
