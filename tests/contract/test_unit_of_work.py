"""The unit of work suites of the conformance kit, on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.unit_of_work import (
    AttemptAtomicityConformance,
    UnitOfWorkConformance,
)


class TestUnitOfWork(OnEveryStore, UnitOfWorkConformance):
    pass


class TestAttemptAtomicity(OnEveryStore, AttemptAtomicityConformance):
    pass
