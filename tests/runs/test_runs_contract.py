"""Run and approval repositories: the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.testing.conformance.approvals import (
    ApprovalInboxProperties,
    ApprovalRepositoryConformance,
)
from ecp_core.testing.conformance.run_search import RunSearchProperties
from ecp_core.testing.conformance.runs import RunRepositoryConformance

pytestmark = pytest.mark.contract


class TestRunRepository(OnEveryStore, RunRepositoryConformance):
    pass


class TestApprovalRepository(OnEveryStore, ApprovalRepositoryConformance):
    pass


class TestApprovalInboxProperties(OnEveryStoreEachExample, ApprovalInboxProperties):
    pass


class TestRunSearchProperties(OnEveryStoreEachExample, RunSearchProperties):
    pass
