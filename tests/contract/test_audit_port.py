"""Audit repository: the kit's suite on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.audit import AuditRepositoryConformance


class TestAuditRepository(OnEveryStore, AuditRepositoryConformance):
    pass
