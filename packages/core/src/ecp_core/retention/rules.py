"""Pure retention rules: policy resolution and who a sweep may touch."""

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from ecp_core.retention.model import (
    SYSTEM_TENANT,
    ConfiguredDefaults,
    LegalHold,
    ResolvedRetentionPolicy,
    RetentionPolicy,
    RetentionPolicySource,
)
from ecp_core.types import RunStatus

TTL_ERASABLE = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED})
"""Run statuses a run TTL may erase; every other status is never TTL-erased."""


def resolve_policy(
    tenant_id: str,
    tenant_row: RetentionPolicy | None,
    configured: ConfiguredDefaults,
    system_row: RetentionPolicy | None,
) -> ResolvedRetentionPolicy:
    """The policy in force, in the spec's order.

    An explicit tenant row wins (a stored null TTL means forever); then the configured defaults
    (when either is set; an unset one keeps forever); then the ``default`` system row; then a
    synthesized keep-forever policy.
    """
    if tenant_row is not None and tenant_row.tenant_id != SYSTEM_TENANT:
        return ResolvedRetentionPolicy(
            tenant_id=tenant_id,
            audit_ttl_seconds=tenant_row.audit_ttl_seconds,
            run_ttl_seconds=tenant_row.run_ttl_seconds,
            enabled=tenant_row.enabled,
            source=RetentionPolicySource.TENANT,
        )
    if configured.configured:
        return ResolvedRetentionPolicy(
            tenant_id=tenant_id,
            audit_ttl_seconds=configured.audit_ttl_seconds,
            run_ttl_seconds=configured.run_ttl_seconds,
            enabled=True,
            source=RetentionPolicySource.CONFIGURED_DEFAULT,
        )
    if system_row is not None:
        return ResolvedRetentionPolicy(
            tenant_id=tenant_id,
            audit_ttl_seconds=system_row.audit_ttl_seconds,
            run_ttl_seconds=system_row.run_ttl_seconds,
            enabled=system_row.enabled,
            source=RetentionPolicySource.SYSTEM_DEFAULT,
        )
    return ResolvedRetentionPolicy(
        tenant_id=tenant_id,
        audit_ttl_seconds=None,
        run_ttl_seconds=None,
        enabled=True,
        source=RetentionPolicySource.SYNTHESIZED,
    )


def held(
    holds: Iterable[LegalHold],
    tenant_id: str,
    run_id: str | None,
    ancestors: Collection[str] = (),
) -> bool:
    """Whether any active hold covers the run (or, with ``run_id`` None, the whole tenant).

    A hold on one of the run's ``ancestors`` covers it too.
    """
    return any(hold.covers(tenant_id, run_id, ancestors) for hold in holds)


def cutoff(now: datetime, ttl_seconds: int | None) -> datetime | None:
    """Records or runs older than this instant are past their TTL (None: keep forever)."""
    return None if ttl_seconds is None else now - timedelta(seconds=ttl_seconds)


def run_ttl_eligible(status: RunStatus, updated_at: datetime, limit: datetime | None) -> bool:
    """Whether a run may be erased by its TTL: terminal, and last updated before the cutoff."""
    return limit is not None and status in TTL_ERASABLE and updated_at < limit
