"""The attestation rules as pure functions: issue and sign, acknowledge, verify a copy."""

from collections.abc import Mapping
from datetime import datetime

from ecp_core.attestations.model import (
    ATTESTATION_TTL,
    ATTESTED_FIELDS,
    EXPIRED,
    AckStatus,
    Attestation,
    AttestationAck,
    AttestationSubmission,
    AttestationVerificationResponse,
)
from ecp_core.canonical import json_digest
from ecp_core.errors import NotCanonicalizable
from ecp_core.ports.system import Signer
from ecp_core.signing import KeyRing
from ecp_core.wire import format_timestamp

DIGEST_FORMAT = "ecp-attestation/1"
"""Named inside the hashed document, so a later format can never collide with this one."""

PRESENTED_DIGEST = "digest"
"""Besides the six fields, a presented copy may carry the digest its acknowledgement named."""


def attestation_digest(
    tenant_id: str, fields: Mapping[str, str], issued_at: datetime, expires_at: datetime
) -> str:
    """``sha256:`` + hex over the canonical JSON of the tenant, the six fields and both times."""
    document = {
        "format": DIGEST_FORMAT,
        "tenant_id": tenant_id,
        **{name: fields[name] for name in ATTESTED_FIELDS},
        "issued_at": format_timestamp(issued_at),
        "expires_at": format_timestamp(expires_at),
    }
    return json_digest(document)


def issue(
    tenant_id: str, submission: AttestationSubmission, now: datetime, signer: Signer | None
) -> Attestation:
    """The attestation the server makes of ``submission`` at ``now``: timed, hashed, signed."""
    fields = {name: getattr(submission, name) for name in ATTESTED_FIELDS}
    expires_at = now + ATTESTATION_TTL
    digest = attestation_digest(tenant_id, fields, now, expires_at)
    return Attestation(
        tenant_id=tenant_id,
        **fields,
        issued_at=now,
        expires_at=expires_at,
        digest=digest,
        signature=None if signer is None else signer.sign_text(digest),
        signing_key_id=None if signer is None else signer.key_id,
    )


def acknowledge(submitted: Attestation, in_force: Attestation, *, stored: bool) -> AttestationAck:
    """The answer to ``submitted`` once ``in_force`` holds the correlation.

    Authoritative when the submission is the one in force: just ``stored`` (``accepted``) or
    the same six fields again (``replayed``); otherwise a ``conflict`` naming the one in force.
    """
    if stored:
        status = AckStatus.ACCEPTED
    elif in_force.attested() == submitted.attested():
        status = AckStatus.REPLAYED
    else:
        status = AckStatus.CONFLICT
    return AttestationAck(
        correlation_id=in_force.correlation_id,
        authoritative=status is not AckStatus.CONFLICT,
        status=status.value,
        digest=in_force.digest,
        expires_at=in_force.expires_at,
    )


def digest_holds(attestation: Attestation) -> bool:
    """Whether the stored fields re-hash to the stored digest."""
    try:
        recomputed = attestation_digest(
            attestation.tenant_id,
            attestation.attested(),
            attestation.issued_at,
            attestation.expires_at,
        )
    except NotCanonicalizable:
        return False
    return recomputed == attestation.digest


def signature_holds(attestation: Attestation, keys: KeyRing) -> bool | None:
    """Whether the signature verifies under its key (retired keys included); None if unsigned."""
    if attestation.signature is None:
        return None
    return keys.verify_text(attestation.signing_key_id, attestation.digest, attestation.signature)


def mismatches(
    stored: Attestation, presented: Mapping[str, str | None], now: datetime
) -> tuple[str, ...]:
    """Each presented field that differs from ``stored``, then ``expired`` if it is no longer in force.

    A field not presented (None or absent) is not compared.
    """
    expected = {**stored.attested(), PRESENTED_DIGEST: stored.digest}
    differing = tuple(
        name
        for name in (*ATTESTED_FIELDS, PRESENTED_DIGEST)
        if presented.get(name) is not None and presented[name] != expected[name]
    )
    return differing if stored.in_force(now) else (*differing, EXPIRED)


def verify(
    stored: Attestation, presented: Mapping[str, str | None], keys: KeyRing, now: datetime
) -> AttestationVerificationResponse:
    """Verify ``stored`` (digest, signature) and compare a presented copy with it."""
    digest_ok = digest_holds(stored)
    signature_ok = signature_holds(stored, keys)
    differing = mismatches(stored, presented, now)
    return AttestationVerificationResponse(
        verified=digest_ok and signature_ok is not False and not differing,
        digest_verified=digest_ok,
        signature_verified=signature_ok,
        signing_key_id=stored.signing_key_id,
        mismatches=differing,
    )


__all__ = [
    "DIGEST_FORMAT",
    "PRESENTED_DIGEST",
    "acknowledge",
    "attestation_digest",
    "digest_holds",
    "issue",
    "mismatches",
    "signature_holds",
    "verify",
]
