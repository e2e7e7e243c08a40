"""Retention: per-tenant TTLs, legal holds and right-to-erasure (run or whole tenant)."""

from ecp_core.retention.model import (
    MAX_TTL_SECONDS,
    SYSTEM_TENANT,
    ConfiguredDefaults,
    CreateLegalHoldRequest,
    ErasureRequest,
    ErasureStepStatus,
    LegalHold,
    ResolvedRetentionPolicy,
    RetentionAuditEntry,
    RetentionPolicy,
    RetentionPolicyRequest,
    RetentionPolicySource,
)
from ecp_core.retention.rules import TTL_ERASABLE, cutoff, held, resolve_policy, run_ttl_eligible

__all__ = [
    "MAX_TTL_SECONDS",
    "SYSTEM_TENANT",
    "TTL_ERASABLE",
    "ConfiguredDefaults",
    "CreateLegalHoldRequest",
    "ErasureRequest",
    "ErasureStepStatus",
    "LegalHold",
    "ResolvedRetentionPolicy",
    "RetentionAuditEntry",
    "RetentionPolicy",
    "RetentionPolicyRequest",
    "RetentionPolicySource",
    "cutoff",
    "held",
    "resolve_policy",
    "run_ttl_eligible",
]
