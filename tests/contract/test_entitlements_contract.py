"""MeterRepository and reservations: the kit's suites on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.entitlements import (
    MeterRepositoryConformance,
    ReservationConformance,
)


class TestMeterRepository(OnEveryStore, MeterRepositoryConformance):
    pass


class TestReservations(OnEveryStore, ReservationConformance):
    pass
