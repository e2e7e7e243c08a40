"""Retention policies, legal holds, erasure requests and the retention audit log."""

import enum
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked

MAX_TTL_SECONDS = 2_147_483_647
Ttl = Annotated[int, Range(1, MAX_TTL_SECONDS)]
"""A TTL: whole positive seconds up to 2**31 - 1; ``None`` where it appears means keep forever."""

SYSTEM_TENANT = "default"
"""The tenant id of the system row every tenant without its own policy falls back to."""


class RetentionPolicySource(enum.StrEnum):
    """Which rule of the resolution order produced a tenant's policy."""

    TENANT = "tenant"
    CONFIGURED_DEFAULT = "configured_default"
    SYSTEM_DEFAULT = "system_default"
    SYNTHESIZED = "synthesized"


@attrs.frozen(kw_only=True, field_transformer=checked)
class RetentionPolicyRequest:
    """Body of ``PUT /v1/retention/policy``: both TTLs are stated, ``null`` keeps forever."""

    audit_ttl_seconds: Ttl | None
    """How long audit records are kept, in seconds; null keeps them."""
    run_ttl_seconds: Ttl | None
    """How long finished runs are kept, in seconds; null keeps them."""
    enabled: bool = True
    """Whether expired data is erased."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class RetentionPolicy:
    """A stored policy row (a tenant's, or the system row with tenant_id ``default``)."""

    tenant_id: str
    audit_ttl_seconds: Ttl | None
    run_ttl_seconds: Ttl | None
    enabled: bool
    updated_at: Annotated[datetime, AwareUtc()]


SYSTEM_POLICY = RetentionPolicy(
    tenant_id=SYSTEM_TENANT,
    audit_ttl_seconds=None,
    run_ttl_seconds=None,
    enabled=True,
    updated_at=datetime(1970, 1, 1, tzinfo=UTC),
)
"""The system row every store starts with: keep audit records and runs forever."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ResolvedRetentionPolicy:
    """The policy in force for a tenant and where it came from."""

    tenant_id: str
    audit_ttl_seconds: int | None
    """How long audit records are kept, in seconds; null keeps them."""
    run_ttl_seconds: int | None
    """How long finished runs are kept, in seconds; null keeps them."""
    enabled: bool
    """Whether expired data is erased."""
    source: RetentionPolicySource
    """Which rule produced the policy: the tenant's own, or a default."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConfiguredDefaults:
    """``SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS`` and ``…_RUN_TTL_SECONDS``."""

    audit_ttl_seconds: Ttl | None = None
    run_ttl_seconds: Ttl | None = None

    @property
    def configured(self) -> bool:
        """Whether either default is set."""
        return self.audit_ttl_seconds is not None or self.run_ttl_seconds is not None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateLegalHoldRequest:
    """Body of ``POST /v1/retention/legal-holds``; without ``run_id`` the hold is tenant-wide."""

    reason: Annotated[str, Text(1, 1000)]
    """Why the data must be kept."""
    run_id: Annotated[str, Text(1, 256)] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class LegalHold:
    """A hold: while active (not released) it beats TTL purge and explicit erasure."""

    hold_id: str
    tenant_id: str
    reason: str
    """Why the data must be kept."""
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str
    run_id: str | None = None
    released_at: Annotated[datetime, AwareUtc()] | None = None
    """When the hold was released (RFC 3339, UTC); null while it holds."""
    released_by: str | None = None
    """Who released it."""

    @property
    def active(self) -> bool:
        """Whether the hold is still in force."""
        return self.released_at is None

    def covers(self, tenant_id: str, run_id: str | None, ancestors: Collection[str] = ()) -> bool:
        """Whether this active hold protects ``run_id`` of ``tenant_id`` (None: the tenant).

        A hold on a run covers its descendants too: ``ancestors`` are the run's parent,
        grandparent and so on (``Run.ancestor_run_ids``, ADR 0046).
        """
        if not self.active or self.tenant_id != tenant_id:
            return False
        return self.run_id is None or self.run_id == run_id or self.run_id in ancestors


@attrs.frozen(kw_only=True, field_transformer=checked)
class ErasureRequest:
    """Body of ``POST /v1/retention/erasure-requests``: exactly one of run_id or tenant_id."""

    reason: Annotated[str, Text(1, 1000)]
    """Why the data is erased; kept in the retention audit log."""
    run_id: Annotated[str, Text(1, 256)] | None = None
    tenant_id: Annotated[str, Text(1, 512)] | None = None


class ErasureStepStatus(enum.StrEnum):
    """How one erasure step ended."""

    DONE = "done"
    SKIPPED = "skipped"
    FAILED = "failed"


@attrs.frozen(kw_only=True, field_transformer=checked)
class RetentionAuditEntry:
    """One append-only line of the retention audit log: one erasure step."""

    entry_id: str
    """The entry's id."""
    tenant_id: str
    step: str
    """The erasure step."""
    status: ErasureStepStatus
    """How the step ended."""
    newly_erased: Annotated[int, Range(0)]
    """How many items the step erased."""
    reason: str
    """Why the data was erased."""
    trigger: str
    """What started the erasure: an expiry or a request."""
    occurred_at: Annotated[datetime, AwareUtc()]
    run_id: str | None = None
    detail: dict[str, Any] = attrs.field(factory=dict)
    """What the step did."""
