"""Samples the retention suite stores: a policy, a legal hold, a log entry, another run's chain."""

from datetime import timedelta
from typing import Any

import attrs

from ecp_core.audit import NodeAuditRecord
from ecp_core.retention.model import (
    ErasureStepStatus,
    LegalHold,
    RetentionAuditEntry,
    RetentionPolicy,
)
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.audit import build_chain


def policy(
    tenant: str = "t1",
    audit: int | None = 3600,
    run_ttl: int | None = 86400,
    enabled: bool = True,  # noqa: FBT001, FBT002 - a sample's knob
    offset: int = 0,
) -> RetentionPolicy:
    """A tenant's retention policy, updated ``offset`` seconds after :data:`NOW`."""
    return RetentionPolicy(
        tenant_id=tenant,
        audit_ttl_seconds=audit,
        run_ttl_seconds=run_ttl,
        enabled=enabled,
        updated_at=NOW + timedelta(seconds=offset),
    )


def hold(
    hold_id: str = "h1", tenant: str = "t1", run_id: str | None = None, offset: int = 0
) -> LegalHold:
    """A legal hold on the tenant, or on one run, created ``offset`` seconds after :data:`NOW`."""
    return LegalHold(
        hold_id=hold_id,
        tenant_id=tenant,
        reason="litigation é",
        created_at=NOW + timedelta(seconds=offset),
        created_by="key-1",
        run_id=run_id,
    )


def entry(
    entry_id: str,
    tenant: str = "t1",
    run_id: str | None = "run-1",
    detail: dict[str, Any] | None = None,
) -> RetentionAuditEntry:
    """A retention log entry of a finished erasure step."""
    return RetentionAuditEntry(
        entry_id=entry_id,
        tenant_id=tenant,
        step="crypto_erase_audits",
        status=ErasureStepStatus.DONE,
        newly_erased=3,
        reason="ttl",
        trigger="purge",
        occurred_at=NOW,
        run_id=run_id,
        detail={} if detail is None else detail,
    )


def other_chain(
    run_id: str,
    prefix: str,
    *,
    tenant: str = "t1",
    shift: timedelta = timedelta(0),
    count: int = 2,
    digest_version: int = 2,
) -> list[NodeAuditRecord]:
    """A chain of another run.

    Ids, tenant and times are changed after sealing: repositories store records as given and do
    not verify them.
    """
    records, _ = build_chain(
        [{"stdout": f"{prefix}{i}"} for i in range(count)],
        run_id=run_id,
        digest_version=digest_version,
    )
    return [
        attrs.evolve(
            r, audit_id=f"{prefix}{r.audit_id}", tenant_id=tenant, created_at=r.created_at + shift
        )
        for r in records
    ]
