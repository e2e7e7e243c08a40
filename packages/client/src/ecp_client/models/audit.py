"""The API's audit models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "AuditBundle",
    "AuditTimelineResponse",
    "AuditVerificationResponse",
    "LogKey",
    "NodeAuditRecord",
    "PublicSigningKey",
    "RecordInclusion",
]


@attrs.frozen(kw_only=True)
class LogKey:
    """A public key of the log: note key name, key hash (hex key id), Ed25519 key, vkey."""

    key_hash: str
    """The key id signature lines start with (8 hex digits)."""
    name: str
    """The note key name: the log's origin, ``<origin>/<tenant id>``."""
    public_key: str
    """The Ed25519 public key, base64."""
    vkey: str
    """The verifier key, ``<name>+<key hash>+<base64 type and key>``, as C2SP writes it."""


@attrs.frozen(kw_only=True)
class NodeAuditRecord:
    """One node attempt, chained to its predecessor in the run and signed."""

    attempt: int
    """The attempt's number in the run, from 1: the record's place in the chain."""
    audit_id: str
    """The record's id."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    digest_version: int
    """How `record_digest` is computed (docs/audit-format.md): 1 and 2 over the plaintext, 3 over salted commitments."""
    erased: bool = False
    """Whether the record's personal data was erased (its digest still verifies)."""
    erased_at: datetime | None = None
    """When it was erased."""
    erasure_reason: str | None = None
    """Why it was erased."""
    error: Any | None = None
    """Why the attempt failed, when it did."""
    execution_metadata: Any | None = None
    """How the attempt ran: the action, its fingerprint, the policy's decision, timings."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    input_snapshot: Any | None = None
    """What the node received."""
    memory_interactions: Any | None = None
    """What the attempt read from and wrote to memory."""
    node_id: str
    """The id of a node of the run's graph."""
    output_snapshot: Any | None = None
    """What the node produced."""
    pii_commitments: dict[str, str] | None = None
    """Version 3: the salted commitment of each personal field, by name."""
    pii_salt: str | None = None
    """Version 3: the record's salt as 64 lowercase hex digits; null once erased (and in 1 and 2)."""
    previous_record_digest: str | None
    """The digest of the run's previous record; null for the first."""
    record_digest: str
    """SHA-256 over the record and its predecessor's digest, as 64 hex digits."""
    run_id: str
    """The run's id."""
    signature: str | None = None
    """The Ed25519 signature of `record_digest`, base64."""
    signing_key_id: str | None = None
    """The id of the signing key (`GET /v1/audit/signing-keys` lists them)."""
    status: str
    """How the attempt ended."""
    stderr: str | None = None
    """What the action wrote to standard error, if anything."""
    stdout: str | None = None
    """What the action wrote to standard output, if anything."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    tool_calls: Any | None = None
    """The model tool calls made during the attempt."""
    validation_results: Any | None = None
    """The checks applied to the node's input or output, and their results."""


@attrs.frozen(kw_only=True)
class PublicSigningKey:
    """A published verification key."""

    algorithm: str = "ed25519"
    """The signature algorithm."""
    key_id: str
    """The key's id, as audit records and attestations name it."""
    public_key: str
    """The public key (base64), to verify signatures with."""


@attrs.frozen(kw_only=True)
class RecordInclusion:
    """A record's leaf index and the hashes (base64, leaf end first) proving it in the tree."""

    audit_id: str
    """The record proved."""
    hashes: list[str]
    """The audit path, base64, from the leaf's sibling up."""
    leaf_index: int
    """Its leaf's position in the log (0 first)."""


@attrs.frozen(kw_only=True)
class AuditBundle:
    """Everything needed to verify one run's records offline."""

    checkpoint: str
    """The signed checkpoint (C2SP tlog-checkpoint note) every proof is against."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    format: str = "ecp-audit-bundle/1"
    """What this document is: ``ecp-audit-bundle/1``."""
    inclusion: list[RecordInclusion]
    """One proof per record, in the records' order."""
    log_keys: list[LogKey]
    """The keys that verify the checkpoint (its note signature)."""
    records: list[NodeAuditRecord]
    """The run's records in chain order."""
    run_id: str
    """The run's id."""
    run_status: str
    """The run's public status when the bundle was made."""
    signing_keys: list[PublicSigningKey]
    """The keys that verify the records' signatures."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    tree_size: int
    """The checkpoint's tree size."""


@attrs.frozen(kw_only=True)
class AuditTimelineResponse:
    """A run's records in chain order."""

    deployment_ref: str
    """The deployment's name within the tenant."""
    entries: list[NodeAuditRecord]
    """The run's audit records in chain order."""
    run_id: str | None = None
    """The run's id."""


@attrs.frozen(kw_only=True)
class AuditVerificationResponse:
    """Result of verifying a chain: digest continuity and, separately, signatures."""

    error: str | None = None
    """Why it failed, if it did."""
    failed_audit_id: str | None = None
    """The first record that failed, if any."""
    record_count: int = 0
    """How many records were checked."""
    scope: str
    """What was verified: a run or a deployment."""
    signature_verified: bool | None = None
    """Whether every signature verifies; null when there were no signed records."""
    signing_key_id: str | None = None
    """The id of the signing key (`GET /v1/audit/signing-keys` lists them)."""
    unsigned_record_count: int = 0
    """How many of them carry no signature."""
    verified: bool
    """Whether every digest recomputes and links to its predecessor."""
