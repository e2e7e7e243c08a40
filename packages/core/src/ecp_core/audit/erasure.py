"""Crypto-erasure: drop the personal data (and a version 3 salt) of a record, keep its chain."""

from datetime import datetime
from typing import Any

import attrs

from ecp_core.audit.record import LEGACY_DIGEST_VERSION, PII_FIELDS, NodeAuditRecord
from ecp_core.errors import AuditRecordNotErasable, Conflict

SALT_FIELD = "pii_salt"
"""The version 3 salt: stored apart from the record, destroyed with its personal data."""


def crypto_erase(record: NodeAuditRecord, reason: str, now: datetime) -> NodeAuditRecord:
    """Return ``record`` with its personal-data fields nulled and the erasure noted.

    Digests, commitments, signature, ids and ``created_at`` stay as they were, so the chain and
    its signatures still verify. A version 3 record also loses its salt, so an erased value cannot
    be guessed back from its commitment. An already erased record is returned unchanged. A
    digest_version 1 record raises AuditRecordNotErasable: its digest covers the plaintext.
    """
    if record.digest_version == LEGACY_DIGEST_VERSION:
        raise AuditRecordNotErasable(
            f"audit record {record.audit_id} has digest_version 1 and cannot be erased"
        )
    if record.erased:
        return record
    cleared: dict[str, Any] = dict.fromkeys((*PII_FIELDS, SALT_FIELD))
    return attrs.evolve(record, erased=True, erased_at=now, erasure_reason=reason, **cleared)


ERASABLE_FIELDS = frozenset({*PII_FIELDS, SALT_FIELD, "erased", "erased_at", "erasure_reason"})
"""What an erasure may change in a stored record."""


def check_erasure(stored: NodeAuditRecord, erased: NodeAuditRecord) -> None:
    """Raise Conflict unless ``erased`` is ``stored`` with its personal data (and salt) erased."""
    if not erased.erased or any(
        getattr(erased, field) is not None for field in (*PII_FIELDS, SALT_FIELD)
    ):
        raise Conflict(
            "an erasure must null every personal-data field and the salt, and mark the record erased"
        )
    kept = {
        field.name: getattr(stored, field.name)
        for field in attrs.fields(NodeAuditRecord)
        if field.name not in ERASABLE_FIELDS
    }
    if attrs.evolve(erased, **kept) != erased:
        raise Conflict("an erasure may change only personal data and erasure fields")
