"""Verification of a run's chain: digest continuity, and signatures as a separate axis."""

from collections.abc import Sequence

from ecp_core.audit.chain import commitments_of, compute_digest
from ecp_core.audit.record import (
    LEGACY_DIGEST_VERSION,
    PII_FIELDS,
    SALTED_DIGEST_VERSION,
    AuditVerificationResponse,
    ChainHead,
    NodeAuditRecord,
    RunChain,
    StoredRecord,
)
from ecp_core.audit.salted import parse_salt, salted_commitments
from ecp_core.audit.stored import proven
from ecp_core.errors import NotCanonicalizable, ValidationFailed
from ecp_core.signing import KeyRing

_PII_FIELD_SET = frozenset(PII_FIELDS)


def _expected_commitments(record: NodeAuditRecord) -> dict[str, str] | str:
    """The commitments a not erased record's plaintext gives, or why they cannot be computed."""
    if record.digest_version != SALTED_DIGEST_VERSION:
        return commitments_of(record)
    salt = parse_salt(record.pii_salt)
    if salt is None:
        return "a digest_version 3 record needs its salt: 64 lowercase hex digits"
    return salted_commitments({field: getattr(record, field) for field in PII_FIELDS}, salt)


def _personal_data_problem(record: NodeAuditRecord) -> str | None:
    """Why the record's personal data disagrees with its commitments, or None."""
    if record.pii_salt is not None and (
        record.digest_version != SALTED_DIGEST_VERSION or record.erased
    ):
        return "only a digest_version 3 record that is not erased carries a salt"
    if record.digest_version == LEGACY_DIGEST_VERSION:
        if record.pii_commitments is not None:
            return "a digest_version 1 record carries no commitments"
        return "a digest_version 1 record cannot be erased" if record.erased else None
    if record.pii_commitments is None or record.pii_commitments.keys() != _PII_FIELD_SET:
        return "pii_commitments must commit to every personal-data field"
    if record.erased:
        if any(getattr(record, field) is not None for field in PII_FIELDS):
            return "an erased record still holds personal data"
        return None
    expected = _expected_commitments(record)
    if isinstance(expected, str):
        return expected
    if expected != record.pii_commitments:
        return "personal data does not match its commitments"
    return None


def _digest_problem(
    entry: NodeAuditRecord | StoredRecord, index: int, previous: str | None
) -> str | None:
    """Why ``entry`` breaks the chain at position ``index``, or None.

    A stored record its texts prove (:func:`~ecp_core.audit.stored.proven`) needs no more; any
    other is loaded and recomputed in full.
    """
    if entry.attempt != index + 1:
        return f"attempt {entry.attempt} stands at position {index + 1}"
    if entry.previous_record_digest != previous:
        return "previous_record_digest does not match the preceding record"
    if isinstance(entry, NodeAuditRecord):
        return content_problem(entry)
    if proven(entry):
        return None
    try:
        record = entry.load()
    except ValidationFailed:
        return "the stored record is not a valid audit record"
    return content_problem(record)


def content_problem(record: NodeAuditRecord) -> str | None:
    """Why the record's personal data or digest does not recompute, or None."""
    try:
        problem = _personal_data_problem(record)
        if problem is None and compute_digest(record) != record.record_digest:
            problem = "record_digest does not match the record"
    except NotCanonicalizable:
        return "record content is not canonical JSON"
    return problem


def verify_chain(
    records: Sequence[NodeAuditRecord | StoredRecord],
    keys: KeyRing,
    *,
    scope: str,
    head: ChainHead | None = None,
) -> AuditVerificationResponse:
    """Verify one run's records (or records as stored) in chain order against its chain head.

    ``verified`` is the unkeyed axis: every digest recomputes, every record links to its
    predecessor, and the last record is the head. ``signature_verified`` is true when every signed
    record's signature holds, false when one fails or an unsigned record follows a signed one
    (stripped signatures), and null when no record is signed (legacy chains).
    """
    failed_id: str | None = None
    error: str | None = None
    signature_failure: NodeAuditRecord | StoredRecord | None = None
    previous: str | None = None
    unsigned = 0
    key_ids: list[str] = []
    for index, record in enumerate(records):
        if error is None:
            problem = _digest_problem(record, index, previous)
            if problem is not None:
                failed_id, error = record.audit_id, problem
        previous = record.record_digest
        if record.signature is None:
            unsigned += 1
            if key_ids and signature_failure is None:
                signature_failure = record  # a signed chain does not go back to unsigned records
            continue
        if record.signing_key_id is not None:
            key_ids.append(record.signing_key_id)
        valid = keys.verify_text(record.signing_key_id, record.record_digest, record.signature)
        if not valid and signature_failure is None:
            signature_failure = record
    if (
        error is None
        and head is not None
        and (head.attempt != len(records) or head.record_digest != previous)
    ):
        failed_id = records[-1].audit_id if records else None
        error = f"chain head expects {head.attempt} records ending in {head.record_digest}"
    signed = len(records) - unsigned
    verified = error is None
    if verified and signature_failure is not None:
        failed_id = signature_failure.audit_id
        error = (
            "unsigned record after signed ones"
            if signature_failure.signature is None
            else "signature does not verify"
        )
    return AuditVerificationResponse(
        scope=scope,
        verified=verified,
        signature_verified=None if signed == 0 else signature_failure is None,
        signing_key_id=key_ids[-1] if key_ids else None,
        record_count=len(records),
        unsigned_record_count=unsigned,
        failed_audit_id=failed_id,
        error=error,
    )


def verify_run_chain(chain: RunChain, keys: KeyRing) -> AuditVerificationResponse:
    """Verify a run's chain as read with its head (:meth:`AuditRepository.chains`)."""
    return verify_chain(chain.entries, keys, scope=f"run:{chain.run_id}", head=chain.head)


def summarise(
    results: Sequence[AuditVerificationResponse], scope: str
) -> AuditVerificationResponse:
    """One answer for several runs' chains, in their order: counts add up; the first failure shows.

    A digest failure comes before a signature failure; ``signature_verified`` is null when no
    record of any chain is signed.
    """
    failed = next((result for result in results if not result.verified), None)
    signature_failed = next(
        (result for result in results if result.signature_verified is False), None
    )
    signed = [
        result.signature_verified for result in results if result.signature_verified is not None
    ]
    first_problem = failed or signature_failed
    return AuditVerificationResponse(
        scope=scope,
        verified=failed is None,
        signature_verified=None if not signed else all(signed),
        signing_key_id=next(
            (r.signing_key_id for r in reversed(results) if r.signing_key_id), None
        ),
        record_count=sum(result.record_count for result in results),
        unsigned_record_count=sum(result.unsigned_record_count for result in results),
        failed_audit_id=None if first_problem is None else first_problem.failed_audit_id,
        error=None if first_problem is None else first_problem.error,
    )
