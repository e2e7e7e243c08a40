"""The digest rules of the audit chain (see docs/audit-format.md).

Version 2 (every new record): each personal-data field is replaced by a commitment
``sha256:`` + hex(SHA-256(JCS(value))); the record digest is ``sha256:`` + hex(SHA-256(JCS(E)))
where E holds the envelope fields, ``pii_commitments`` and ``previous_record_digest``. Version 1
(legacy) hashes the envelope with the personal-data fields in plaintext, so it cannot be erased.
Version 3 (opt-in per tenant) is version 2 with salted commitments (:mod:`ecp_core.audit.salted`);
the digest covers the commitments, never the salt.
"""

import functools
import hashlib
import operator
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ecp_core.audit.record import (
    DIGEST_VERSION,
    LEGACY_DIGEST_VERSION,
    PII_FIELDS,
    SALTED_DIGEST_VERSION,
    NodeAuditRecord,
)
from ecp_core.audit.salted import salt_hex, salted_commitments
from ecp_core.canonical import canonical_json, json_digest, sha256_digest

if TYPE_CHECKING:
    from ecp_core.ports.system import Signer
from ecp_core.wire import format_timestamp

ENVELOPE_FIELDS = (
    "audit_id",
    "run_id",
    "tenant_id",
    "deployment_ref",
    "graph_version_ref",
    "node_id",
    "attempt",
    "status",
    "created_at",
    "digest_version",
    "previous_record_digest",
)
"""Fields hashed as they are, in both digest versions."""

_NULL_COMMITMENT = json_digest(None)


def commitment(value: Any) -> str:  # noqa: ANN401 - personal data is any JSON value
    """The commitment to one personal-data field value: ``json_digest(value)``, inlined."""
    if value is None:
        return _NULL_COMMITMENT
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def commitments_of(record: NodeAuditRecord | Mapping[str, Any]) -> dict[str, str]:
    """Commitments to the personal-data fields of a (not erased) record."""
    if isinstance(record, Mapping):
        return {field: commitment(record.get(field)) for field in PII_FIELDS}
    return {field: commitment(getattr(record, field)) for field in PII_FIELDS}


_envelope_values = operator.attrgetter(*ENVELOPE_FIELDS)


def _hashed(envelope: dict[str, Any], value: Callable[[str], Any]) -> dict[str, Any]:
    """The hashed form from the envelope fields' values and ``value`` of any other field."""
    envelope["created_at"] = format_timestamp(envelope["created_at"])
    envelope["status"] = str(envelope["status"])
    if envelope["digest_version"] == LEGACY_DIGEST_VERSION:
        envelope.update({field: value(field) for field in PII_FIELDS})
    else:
        envelope["pii_commitments"] = value("pii_commitments")
    return envelope


def hashed_form(record: NodeAuditRecord) -> dict[str, Any]:
    """The exact JSON object whose canonical bytes the record digest covers."""
    envelope = dict(zip(ENVELOPE_FIELDS, _envelope_values(record), strict=True))
    return _hashed(envelope, functools.partial(getattr, record))


def hashed_bytes(record: NodeAuditRecord) -> bytes:
    """Canonical bytes of :func:`hashed_form`."""
    return canonical_json(hashed_form(record))


def compute_digest(record: NodeAuditRecord) -> str:
    """Recompute the record digest from the record's hashed form."""
    return sha256_digest(hashed_bytes(record))


def _sealed_commitments(
    digest_version: int, fields: Mapping[str, Any], salt: bytes | None
) -> dict[str, str] | None:
    """The commitments a new record of ``digest_version`` carries; a salt only for version 3."""
    if (salt is not None) != (digest_version == SALTED_DIGEST_VERSION):
        msg = "a salt is required for digest_version 3 and refused for the other versions"
        raise ValueError(msg)
    if salt is not None:
        return salted_commitments(fields, salt)
    return commitments_of(fields) if digest_version == DIGEST_VERSION else None


def seal(
    *,
    previous_record_digest: str | None,
    signer: "Signer | None",
    created_at: datetime,
    digest_version: int = DIGEST_VERSION,
    salt: bytes | None = None,
    **fields: Any,  # noqa: ANN401 - the record's remaining fields
) -> NodeAuditRecord:
    """Build a record: commit to personal data, compute the digest, sign it when a signer is given.

    ``digest_version=1`` builds a legacy record (import of old chains and tests only);
    ``digest_version=3`` needs the record's 32-byte ``salt`` (:func:`~ecp_core.audit.salted.new_salt`).
    """
    values: dict[str, Any] = {
        "previous_record_digest": previous_record_digest,
        "created_at": created_at,
        "digest_version": digest_version,
        "pii_commitments": _sealed_commitments(digest_version, fields, salt),
        "pii_salt": None if salt is None else salt_hex(salt),
        **fields,
    }
    absent = [field for field in ENVELOPE_FIELDS if field not in values]
    if absent:
        msg = f"seal() needs the record's {', '.join(absent)}"
        raise TypeError(msg)
    # The record is built once, from the values its digest covers (models validate, never convert).
    envelope = {field: values[field] for field in ENVELOPE_FIELDS}
    digest = sha256_digest(canonical_json(_hashed(envelope, values.get)))
    return NodeAuditRecord(
        record_digest=digest,
        signature=None if signer is None else signer.sign_text(digest),
        signing_key_id=None if signer is None else signer.key_id,
        **values,
    )
