"""Use cases for the audit trail: read, verify, erase, publish keys."""

from collections.abc import Callable, Sequence

from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
)
from ecp_core.audit.verify import verify_chain
from ecp_core.catalog.service import require_deployment
from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.pages import DEFAULT_PAGE, decode_cursor, encode_cursor
from ecp_core.ports.runs import RunsUnit
from ecp_core.runs.model import Run
from ecp_core.signing import KeyRing, PublicSigningKey


def _position(cursor: str) -> tuple[str, int]:
    run_id, attempt = decode_cursor("audit", cursor, 2)
    if not attempt.isdigit():
        raise ValidationFailed(
            "invalid cursor",
            errors=[FieldError(loc=("cursor",), msg="not a cursor this service issued")],
        )
    return run_id, int(attempt)


def _require_run(uow: RunsUnit, tenant_id: str, run_id: str) -> Run:
    run = uow.runs.get(tenant_id, run_id)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    return run


class AuditService:
    """Reads and verifies audit chains (erasure is the retention area's, in the spec's steps)."""

    def __init__(self, uow: Callable[[], RunsUnit], keys: Sequence[PublicSigningKey]) -> None:
        """``keys`` are the published verification keys (current and retired)."""
        self._uow = uow
        self._keys = tuple(keys)
        self._ring = KeyRing.of(keys)

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
        """Verify one run's chain against its head."""
        with self._uow() as uow:
            _require_run(uow, tenant_id, run_id)
            records = uow.audit.for_run(tenant_id, run_id)
            head = uow.audit.head(run_id)
        return verify_chain(records, self._ring, scope=f"run:{run_id}", head=head)

    def verify_deployment(self, tenant_id: str, deployment_ref: str) -> AuditVerificationResponse:
        """Verify every run chain of a deployment; the first failure is reported."""
        with self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            records = uow.audit.for_deployment(tenant_id, deployment_ref)
            run_ids = list(dict.fromkeys(record.run_id for record in records))
            heads = {run_id: uow.audit.head(run_id) for run_id in run_ids}
        results = [
            verify_chain(
                [r for r in records if r.run_id == run_id],
                self._ring,
                scope=f"run:{run_id}",
                head=heads[run_id],
            )
            for run_id in run_ids
        ]
        failed = next((result for result in results if not result.verified), None)
        signature_failed = next(
            (result for result in results if result.signature_verified is False), None
        )
        signed = [
            result.signature_verified for result in results if result.signature_verified is not None
        ]
        first_problem = failed or signature_failed
        return AuditVerificationResponse(
            scope=f"deployment:{deployment_ref}",
            verified=failed is None,
            signature_verified=None if not signed else all(signed),
            signing_key_id=next(
                (r.signing_key_id for r in reversed(results) if r.signing_key_id), None
            ),
            record_count=sum(result.record_count for result in results),
            unsigned_record_count=sum(result.unsigned_record_count for result in results),
            failed_audit_id=None if first_problem is None else first_problem.failed_audit_id,
            error=None if first_problem is None else first_problem.error,
        )
