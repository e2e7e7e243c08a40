"""Retention repository, and the run and audit queries the TTL sweeps select with."""

from ecp_core.testing.conformance.retention.repository import RetentionRepositoryConformance

__all__ = ["RetentionRepositoryConformance"]
