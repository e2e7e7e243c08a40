"""RolloutRepository: the kit's suite on memory and PostgreSQL, and a tampered assignment."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.rollouts import RolloutRepositoryConformance

pytestmark = pytest.mark.contract


class TestRolloutRepository(OnEveryStore, RolloutRepositoryConformance):
    pass
