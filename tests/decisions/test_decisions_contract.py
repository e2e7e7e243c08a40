"""Version decisions: the kit's suites on memory and PostgreSQL.

Artifacts, schedules and source inventories on both stores; PostgreSQL's evidence selection and
whole comparisons against the in-memory reference.
"""

import pytest
from tests.support.stores import OnEveryStore, OnPostgresEachExample

from ecp_core.testing.conformance.decisions import (
    DecisionRepositoryConformance,
    DecisionsMatchReference,
)

pytestmark = pytest.mark.contract


class TestDecisionRepository(OnEveryStore, DecisionRepositoryConformance):
    pass


class TestPostgresDecisionsMatchReference(OnPostgresEachExample, DecisionsMatchReference):
    pass
