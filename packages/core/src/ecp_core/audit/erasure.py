"""Crypto-erasure: drop the personal data of a version 2 record, keep its chain intact."""

from datetime import datetime
from typing import Any

import attrs

from ecp_core.audit.record import LEGACY_DIGEST_VERSION, PII_FIELDS, NodeAuditRecord
from ecp_core.errors import AuditRecordNotErasable


def crypto_erase(record: NodeAuditRecord, reason: str, now: datetime) -> NodeAuditRecord:
    """Return ``record`` with its personal-data fields nulled and the erasure noted.

    Digests, commitments, signature, ids and ``created_at`` stay as they were, so the chain and
    its signatures still verify. An already erased record is returned unchanged. A digest_version
    1 record raises AuditRecordNotErasable: its digest covers the plaintext.
    """
    if record.digest_version == LEGACY_DIGEST_VERSION:
        raise AuditRecordNotErasable(
            f"audit record {record.audit_id} has digest_version 1 and cannot be erased"
        )
    if record.erased:
        return record
    cleared: dict[str, Any] = dict.fromkeys(PII_FIELDS)
    return attrs.evolve(record, erased=True, erased_at=now, erasure_reason=reason, **cleared)
