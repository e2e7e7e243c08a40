"""Audit repository: the kit's suite on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.audit import AuditRepositoryConformance

pytestmark = pytest.mark.contract


class TestAuditRepository(OnEveryStore, AuditRepositoryConformance):
    pass
