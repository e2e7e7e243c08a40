"""Graph, deployment and policy repositories: the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.graphs import (
    DeploymentRepositoryConformance,
    GraphRepositoryConformance,
    PolicyRepositoryConformance,
)

pytestmark = pytest.mark.contract


class TestGraphRepository(OnEveryStore, GraphRepositoryConformance):
    pass


class TestDeploymentRepository(OnEveryStore, DeploymentRepositoryConformance):
    pass


class TestPolicyRepository(OnEveryStore, PolicyRepositoryConformance):
    pass
