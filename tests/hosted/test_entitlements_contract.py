"""MeterRepository and reservations: the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.entitlements import (
    MeterRepositoryConformance,
    ReservationConformance,
)

pytestmark = pytest.mark.contract


class TestMeterRepository(OnEveryStore, MeterRepositoryConformance):
    pass


class TestReservations(OnEveryStore, ReservationConformance):
    pass
