"""The unit of work suites of the conformance kit, on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.unit_of_work import (
    AttemptAtomicityConformance,
    UnitOfWorkConformance,
)

pytestmark = pytest.mark.contract


class TestUnitOfWork(OnEveryStore, UnitOfWorkConformance):
    pass


class TestAttemptAtomicity(OnEveryStore, AttemptAtomicityConformance):
    pass
