"""Attestations: what a client submits, what the server stores and signs, and the answers.

The client never signs. The server stamps ``issued_at`` with its clock, lets the attestation hold
its correlation for :data:`ATTESTATION_TTL`, hashes every attested field (tenant and both times
included) into ``digest`` and signs that digest with its audit Ed25519 key (ADR 0041).
"""

import enum
from datetime import datetime, timedelta
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Text, checked

ATTESTATION_TTL = timedelta(minutes=15)
"""How long an attestation is in force after the server issued it."""

ATTESTED_FIELDS = (
    "correlation_id",
    "deployment_ref",
    "graph_version",
    "adapter_version",
    "inventory_fingerprint",
    "claimed_level",
)
"""The six submitted fields, in the order mismatches are reported."""

EXPIRED = "expired"
"""The mismatch named when the attestation presented against is no longer in force."""

CorrelationId = Annotated[str, Text(1, 256, pattern=r"[^/]+")]
AttestedText = Annotated[str, Text(0, 512)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class AttestationSubmission:
    """Body of ``POST /v1/attestations`` (no extras): six strings, all required, none signed."""

    correlation_id: CorrelationId
    deployment_ref: Annotated[str, Text(1, 512)]
    graph_version: AttestedText
    """The graph version the attestation is about."""
    adapter_version: AttestedText
    """The version of the adapter that ran it."""
    inventory_fingerprint: AttestedText
    """The fingerprint of the inventory the adapter saw."""
    claimed_level: AttestedText
    """The level of assurance claimed."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Attestation:
    """A stored attestation: the submitted fields, the server's times, digest and signature.

    ``signature`` and ``signing_key_id`` are None only for an unsigned legacy row (or one stored
    by an embedder that built the service without a signer).
    """

    tenant_id: str
    correlation_id: str
    deployment_ref: str
    graph_version: str
    adapter_version: str
    inventory_fingerprint: str
    claimed_level: str
    issued_at: Annotated[datetime, AwareUtc()]
    expires_at: Annotated[datetime, AwareUtc()]
    digest: str
    signature: str | None = None
    signing_key_id: str | None = None

    def in_force(self, now: datetime) -> bool:
        """Whether it still holds its correlation at ``now`` (expiry is exclusive)."""
        return now < self.expires_at

    def attested(self) -> dict[str, str]:
        """The six submitted fields by name."""
        return {name: getattr(self, name) for name in ATTESTED_FIELDS}


class AckStatus(enum.StrEnum):
    """What became of a submission."""

    ACCEPTED = "accepted"
    """It is new and now the one in force."""
    REPLAYED = "replayed"
    """It repeats the one in force exactly; nothing was stored."""
    CONFLICT = "conflict"
    """Another attestation holds the correlation; nothing was stored."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AttestationAck:
    """The answer to a submission; ``digest`` and ``expires_at`` describe the one in force."""

    correlation_id: str
    authoritative: bool
    """Whether the attestation in force is the one submitted (false when another won)."""
    status: str
    """What became of the submission: `accepted`, `replayed` or `conflict`."""
    digest: str
    """The digest of the attestation in force."""
    expires_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class AttestationVerificationResponse:
    """How a presented copy compares with the stored attestation, and whether that one is intact.

    ``verified`` holds when the stored digest re-computes, the signature verifies (or the row is
    unsigned legacy), and ``mismatches`` is empty.
    """

    verified: bool
    """Whether the digest re-computes, the signature verifies and nothing differs."""
    digest_verified: bool = False
    """Whether the stored digest re-computes from the stored content."""
    signature_verified: bool | None = None
    """Whether the signature verifies; null when the row is unsigned."""
    signing_key_id: str | None = None
    mismatches: tuple[str, ...] = ()
    """The fields where the presented copy differs from the stored one."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AttestationResponse:
    """The stored attestation as ``GET /v1/attestations/{correlation_id}`` shows it."""

    correlation_id: str
    deployment_ref: str
    graph_version: str
    """The graph version the attestation is about."""
    adapter_version: str
    """The version of the adapter that ran it."""
    inventory_fingerprint: str
    """The fingerprint of the inventory the adapter saw."""
    claimed_level: str
    """The level of assurance claimed."""
    issued_at: Annotated[datetime, AwareUtc()]
    """When it was stored (RFC 3339, UTC)."""
    expires_at: Annotated[datetime, AwareUtc()]
    in_force: bool
    """Whether it has not expired yet."""
    digest: str
    """The digest of its content, as stored."""
    signature: str | None
    """The service's signature of the digest; null on an unsigned legacy row."""
    signing_key_id: str | None

    @classmethod
    def of(cls, attestation: Attestation, now: datetime) -> "AttestationResponse":
        """Show ``attestation`` as it stands at ``now``."""
        return cls(
            **attestation.attested(),
            issued_at=attestation.issued_at,
            expires_at=attestation.expires_at,
            in_force=attestation.in_force(now),
            digest=attestation.digest,
            signature=attestation.signature,
            signing_key_id=attestation.signing_key_id,
        )


__all__ = [
    "ATTESTATION_TTL",
    "ATTESTED_FIELDS",
    "EXPIRED",
    "AckStatus",
    "Attestation",
    "AttestationAck",
    "AttestationResponse",
    "AttestationSubmission",
    "AttestationVerificationResponse",
]
