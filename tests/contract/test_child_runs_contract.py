"""Child runs in the run and retention ports: the kit's suite on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.child_runs import ChildRunsConformance


class TestChildRuns(OnEveryStore, ChildRunsConformance):
    pass
