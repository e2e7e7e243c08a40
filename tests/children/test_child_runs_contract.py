"""Child runs in the run and retention ports: the kit's suite on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.child_runs import ChildRunsConformance

pytestmark = pytest.mark.contract


class TestChildRuns(OnEveryStore, ChildRunsConformance):
    pass
