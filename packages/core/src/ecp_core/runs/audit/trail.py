"""Use cases for the audit trail: read, verify, erase, publish keys."""

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
    NodeAuditRecord,
)
from ecp_core.audit.verify import summarise, verify_run_chain
from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.pages import DEFAULT_PAGE, decode_cursor, encode_cursor
from ecp_core.ports.audit import WithAudit
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.runs import WithRuns
from ecp_core.ports.unit import Transaction
from ecp_core.registry.service import require_deployment
from ecp_core.runs.run.model import Run
from ecp_core.signing import KeyRing, PublicSigningKey

VERIFY_CONNECTIONS = 4
"""Units of work (pooled connections) verifications use at once, all together (ADR 0061)."""
RUNS_PER_READ = 200
"""Runs whose chains one read of a deployment verification fetches."""


class AuditTrailUnit(Transaction, WithRuns, WithDeployments, WithAudit, Protocol):
    """What the audit trail's reads touch: runs, deployments and their records."""


def _position(cursor: str) -> tuple[str, int]:
    run_id, attempt = decode_cursor("audit", cursor, 2)
    if not attempt.isdigit():
        raise ValidationFailed(
            "invalid cursor",
            errors=[FieldError(loc=("cursor",), msg="not a cursor this service issued")],
        )
    return run_id, int(attempt)


def _require_run(uow: AuditTrailUnit, tenant_id: str, run_id: str) -> Run:
    run = uow.runs.get(tenant_id, run_id)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    return run


class AuditTrail:
    """Reads and verifies audit chains (erasure is the retention area's, in the spec's steps)."""

    def __init__(
        self,
        uow: Callable[[], AuditTrailUnit],
        keys: Sequence[PublicSigningKey],
        *,
        connections: int = VERIFY_CONNECTIONS,
    ) -> None:
        """``keys`` are the published verification keys (current and retired).

        ``connections``: how many units of work deployment verifications hold at once, all of
        them together (concurrent requests share the cap, so the pool keeps the rest).
        """
        self._uow = uow
        self._keys = tuple(keys)
        self._ring = KeyRing.of(keys)
        self._connections = max(1, connections)
        self._slots = threading.BoundedSemaphore(self._connections)

    def signing_keys(self) -> tuple[PublicSigningKey, ...]:
        """The public keys records are verified with."""
        return self._keys

    def timeline(self, tenant_id: str, run_id: str) -> AuditTimelineResponse:
        """A run's records in chain order."""
        with self._uow() as uow:
            run = _require_run(uow, tenant_id, run_id)
            entries = uow.audit.for_run(tenant_id, run_id)
        return AuditTimelineResponse(
            deployment_ref=run.deployment_ref, run_id=run_id, entries=tuple(entries)
        )

    def run_records(
        self, tenant_id: str, run_id: str
    ) -> tuple[str, str, tuple[NodeAuditRecord, ...]]:
        """A run's deployment, public status and records in chain order (what a bundle holds)."""
        with self._uow() as uow:
            run = _require_run(uow, tenant_id, run_id)
            entries = uow.audit.for_run(tenant_id, run_id)
        return run.deployment_ref, run.public_status.value, tuple(entries)

    def by_ids(
        self, tenant_id: str, deployment_ref: str, audit_ids: Sequence[str]
    ) -> dict[str, NodeAuditRecord]:
        """The tenant's records among ``audit_ids`` (NotFound when the deployment is unknown)."""
        with self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            return uow.audit.many(tenant_id, audit_ids) if audit_ids else {}

    def records(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int = DEFAULT_PAGE,
        cursor: str | None = None,
    ) -> tuple[AuditRecordListResponse, str | None]:
        """A page of a deployment's records (optionally of one run) and the next page's cursor."""
        after = None if cursor is None else _position(cursor)
        with self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            records = uow.audit.for_deployment(
                tenant_id, deployment_ref, run_id, limit=limit + 1, after=after
            )
        more = len(records) > limit
        records = records[:limit]
        next_cursor = (
            encode_cursor("audit", records[-1].run_id, str(records[-1].attempt)) if more else None
        )
        return AuditRecordListResponse(
            deployment_ref=deployment_ref, records=tuple(records)
        ), next_cursor

    def verify_run(self, tenant_id: str, run_id: str) -> AuditVerificationResponse:
        """Verify one run's chain against its head (read together, without locks)."""
        with self._uow() as uow:
            _require_run(uow, tenant_id, run_id)
            (chain,) = uow.audit.chains(tenant_id, [run_id])
        return verify_run_chain(chain, self._ring)

    def verify_deployment(self, tenant_id: str, deployment_ref: str) -> AuditVerificationResponse:
        """Verify every run chain of a deployment; the first failure in run-id order is reported.

        Runs are read and verified in batches of :data:`RUNS_PER_READ`, up to ``connections``
        batches at once, each in its own unit of work (its own connection on PostgreSQL); the
        reads of every verification of this service share those ``connections`` slots.
        """
        with self._slots, self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            run_ids = uow.audit.chain_run_ids(tenant_id, deployment_ref)
        batches = [
            run_ids[start : start + RUNS_PER_READ]
            for start in range(0, len(run_ids), RUNS_PER_READ)
        ]
        verify = partial(self._verify_batch, tenant_id)
        if self._connections > 1 and len(batches) > 1:
            with ThreadPoolExecutor(min(self._connections, len(batches))) as pool:
                parts = list(pool.map(verify, batches))
        else:
            parts = [verify(batch) for batch in batches]
        return summarise(
            [result for part in parts for result in part], scope=f"deployment:{deployment_ref}"
        )

    def _verify_batch(
        self, tenant_id: str, run_ids: Sequence[str]
    ) -> list[AuditVerificationResponse]:
        with self._slots, self._uow() as uow:
            chains = uow.audit.chains(tenant_id, run_ids)
        return [verify_run_chain(chain, self._ring) for chain in chains]
