"""The audit record of one node attempt, and the responses that carry records."""

from collections.abc import Callable
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
    """The record's id."""
    run_id: str
    tenant_id: str
    deployment_ref: str
    graph_version_ref: str
    node_id: str
    attempt: Annotated[int, Range(1)]
    """The attempt's number in the run, from 1: the record's place in the chain."""
    status: AttemptStatus
    """How the attempt ended."""
    created_at: Annotated[datetime, AwareUtc()]
    digest_version: Annotated[int, Range(LEGACY_DIGEST_VERSION, SALTED_DIGEST_VERSION)]
    """How `record_digest` is computed (docs/audit-format.md): 1 and 2 over the plaintext, 3 over
    salted commitments."""
    record_digest: str
    """SHA-256 over the record and its predecessor's digest, as 64 hex digits."""
    previous_record_digest: str | None
    """The digest of the run's previous record; null for the first."""
    pii_commitments: dict[str, str] | None = None
    """Version 3: the salted commitment of each personal field, by name."""
    pii_salt: str | None = None
    """Version 3: the record's salt as 64 lowercase hex digits; null once erased (and in 1 and 2)."""
    input_snapshot: Any = None
    """What the node received."""
    output_snapshot: Any = None
    """What the node produced."""
    validation_results: Any = None
    """The checks applied to the node's input or output, and their results."""
    execution_metadata: Any = None
    """How the attempt ran: the action, its fingerprint, the policy's decision, timings."""
    stdout: str | None = None
    """What the action wrote to standard output, if anything."""
    stderr: str | None = None
    """What the action wrote to standard error, if anything."""
    error: Any = None
    """Why the attempt failed, when it did."""
    tool_calls: Any = None
    """The model tool calls made during the attempt."""
    memory_interactions: Any = None
    """What the attempt read from and wrote to memory."""
    signature: str | None = None
    """The Ed25519 signature of `record_digest`, base64."""
    signing_key_id: str | None = None
    erased: bool = False
    """Whether the record's personal data was erased (its digest still verifies)."""
    erased_at: Annotated[datetime, AwareUtc()] | None = None
    """When it was erased."""
    erasure_reason: str | None = None
    """Why it was erased."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditTimelineResponse:
    """A run's records in chain order."""

    deployment_ref: str
    entries: tuple[NodeAuditRecord, ...]
    """The run's audit records in chain order."""
    run_id: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditRecordListResponse:
    """A deployment's records, optionally for one run."""

    deployment_ref: str
    records: tuple[NodeAuditRecord, ...]
    """The deployment's audit records."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditVerificationResponse:
    """Result of verifying a chain: digest continuity and, separately, signatures."""

    scope: str
    """What was verified: a run or a deployment."""
    verified: bool
    """Whether every digest recomputes and links to its predecessor."""
    signature_verified: bool | None = None
    """Whether every signature verifies; null when there were no signed records."""
    signing_key_id: str | None = None
    record_count: int = 0
    """How many records were checked."""
    unsigned_record_count: int = 0
    """How many of them carry no signature."""
    failed_audit_id: str | None = None
    """The first record that failed, if any."""
    error: str | None = None
    """Why it failed, if it did."""


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


@attrs.frozen(kw_only=True)
class StoredRecord:
    """A record as a store read it for verification: what its digest covers, as stored (ADR 0061).

    ``envelope`` holds the hashed envelope fields (``ENVELOPE_FIELDS`` of
    :mod:`ecp_core.audit.chain`) as the digest hashes them: ``created_at`` as RFC 3339 text,
    ``status`` as text. ``texts`` holds, in ``PII_FIELDS`` order, the stored JSON text of each
    personal-data field (None for SQL null). ``load`` builds the full record (parsed and validated)
    when the texts do not prove it (:func:`ecp_core.audit.stored.proven`).
    """

    audit_id: str
    attempt: int
    previous_record_digest: str | None
    record_digest: str
    signature: str | None
    signing_key_id: str | None
    envelope: dict[str, Any]
    pii_commitments: Any
    """The stored commitments by field name; None (or anything) when the store cannot say."""
    pii_salt: str | None
    erased: bool
    texts: tuple[str | None, ...]
    load: Callable[[], NodeAuditRecord] = attrs.field(eq=False, repr=False)


@attrs.frozen(kw_only=True)
class RunChain:
    """A run's records in chain order and its chain head, read together in one snapshot.

    ``entries`` are records, or records as stored (:class:`StoredRecord`) that verification
    proves from their stored canonical texts and loads only when that fails.
    """

    run_id: str
    entries: tuple[NodeAuditRecord | StoredRecord, ...]
    head: ChainHead | None

    @property
    def records(self) -> tuple[NodeAuditRecord, ...]:
        """The run's records in chain order (stored ones loaded)."""
        return tuple(
            entry if isinstance(entry, NodeAuditRecord) else entry.load() for entry in self.entries
        )


def not_extending(record: NodeAuditRecord) -> ChainConflict:
    """A record that does not follow its run's chain head (attempt + 1, previous digest)."""
    return ChainConflict(f"record {record.audit_id} does not extend run {record.run_id}'s chain")
