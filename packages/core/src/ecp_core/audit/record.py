"""The audit record of one node attempt, and the responses that carry records."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Range, allow_extras, checked
from ecp_core.errors import ChainConflict
from ecp_core.types import AttemptStatus

PII_FIELDS = (
    "input_snapshot",
    "output_snapshot",
    "validation_results",
    "execution_metadata",
    "stdout",
    "stderr",
    "error",
    "tool_calls",
    "memory_interactions",
)
"""Fields that may hold personal data: committed to, never hashed in plaintext (version 2)."""

LEGACY_DIGEST_VERSION = 1
DIGEST_VERSION = 2
SALTED_DIGEST_VERSION = 3
"""Opt-in per tenant (ADR 0047): each commitment also covers a per-record salt kept apart."""
ERASABLE_DIGEST_VERSIONS = (DIGEST_VERSION, SALTED_DIGEST_VERSION)
"""Versions whose digest covers commitments, not plaintext, so their personal data can be erased."""


@allow_extras
@attrs.frozen(kw_only=True, field_transformer=checked)
class NodeAuditRecord:
    """One node attempt, chained to its predecessor in the run and signed.

    ``attempt`` numbers the run's attempts from 1 and is the record's place in the chain.
    """

    audit_id: str
    run_id: str
    tenant_id: str
    deployment_ref: str
    graph_version_ref: str
    node_id: str
    attempt: Annotated[int, Range(1)]
    status: AttemptStatus
    created_at: Annotated[datetime, AwareUtc()]
    digest_version: Annotated[int, Range(LEGACY_DIGEST_VERSION, SALTED_DIGEST_VERSION)]
    record_digest: str
    previous_record_digest: str | None
    pii_commitments: dict[str, str] | None = None
    pii_salt: str | None = None
    """Version 3: the record's salt as 64 lowercase hex digits; null once erased (and in 1 and 2)."""
    input_snapshot: Any = None
    output_snapshot: Any = None
    validation_results: Any = None
    execution_metadata: Any = None
    stdout: str | None = None
    stderr: str | None = None
    error: Any = None
    tool_calls: Any = None
    memory_interactions: Any = None
    signature: str | None = None
    signing_key_id: str | None = None
    erased: bool = False
    erased_at: Annotated[datetime, AwareUtc()] | None = None
    erasure_reason: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditTimelineResponse:
    """A run's records in chain order."""

    deployment_ref: str
    entries: tuple[NodeAuditRecord, ...]
    run_id: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditRecordListResponse:
    """A deployment's records, optionally for one run."""

    deployment_ref: str
    records: tuple[NodeAuditRecord, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditVerificationResponse:
    """Result of verifying a chain: digest continuity and, separately, signatures."""

    scope: str
    verified: bool
    signature_verified: bool | None = None
    signing_key_id: str | None = None
    record_count: int = 0
    unsigned_record_count: int = 0
    failed_audit_id: str | None = None
    error: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditDeliveryHealth:
    """Counters of audit event delivery; only ``delivered`` means durable.

    ``rejected``, ``failed`` and ``abandoned`` count losses; ``losing_events`` says any is non-zero.
    """

    queue_depth: int
    queued: int
    delivered: int
    retried: int
    rejected: int
    failed: int
    abandoned: int
    losing_events: bool


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditReadinessResponse:
    """Whether the audit trail can accept consequential actions in this deployment mode."""

    ready: bool
    state: str
    deployment_mode: str
    signing_required: bool
    signer_available: bool
    consequential_actions: bool
    message: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChainHead:
    """The last record of a run's chain: its place and digest (stored with the run's audit)."""

    run_id: str
    attempt: int
    record_digest: str


def not_extending(record: NodeAuditRecord) -> ChainConflict:
    """A record that does not follow its run's chain head (attempt + 1, previous digest)."""
    return ChainConflict(f"record {record.audit_id} does not extend run {record.run_id}'s chain")
