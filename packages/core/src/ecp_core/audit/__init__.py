"""The tamper-evident audit chain: records, digests, signatures, verification and erasure."""

from ecp_core.audit.chain import commitment, compute_digest, hashed_form, seal
from ecp_core.audit.erasure import crypto_erase
from ecp_core.audit.record import (
    DIGEST_VERSION,
    LEGACY_DIGEST_VERSION,
    PII_FIELDS,
    SALTED_DIGEST_VERSION,
    AuditDeliveryHealth,
    AuditReadinessResponse,
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
    ChainHead,
    NodeAuditRecord,
)
from ecp_core.audit.settings import AuditSettings, AuditSettingsRequest
from ecp_core.audit.verify import verify_chain
from ecp_core.signing import Ed25519Signer, KeyRing, PublicSigningKey, derive_key_id

__all__ = [
    "DIGEST_VERSION",
    "LEGACY_DIGEST_VERSION",
    "PII_FIELDS",
    "SALTED_DIGEST_VERSION",
    "AuditDeliveryHealth",
    "AuditReadinessResponse",
    "AuditRecordListResponse",
    "AuditSettings",
    "AuditSettingsRequest",
    "AuditTimelineResponse",
    "AuditVerificationResponse",
    "ChainHead",
    "Ed25519Signer",
    "KeyRing",
    "NodeAuditRecord",
    "PublicSigningKey",
    "commitment",
    "compute_digest",
    "crypto_erase",
    "derive_key_id",
    "hashed_form",
    "seal",
    "verify_chain",
]
