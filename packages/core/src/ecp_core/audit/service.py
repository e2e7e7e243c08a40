"""Use cases for the audit trail: read, verify, erase, publish keys."""

import base64
import binascii
from collections.abc import Sequence

from ecp_core.audit.erasure import crypto_erase
from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
    NodeAuditRecord,
)
from ecp_core.audit.signing import KeyRing, PublicSigningKey
from ecp_core.audit.verify import verify_chain
from ecp_core.errors import FieldError, NotFound, ValidationFailed
from ecp_core.graphs.catalog import require_deployment
from ecp_core.ports import Clock, UnitOfWork, UnitOfWorkFactory
from ecp_core.runs.model import Run

DEFAULT_PAGE = 50
_CURSOR_SEPARATOR = "\n"


def _cursor(record: NodeAuditRecord) -> str:
    raw = f"audit{_CURSOR_SEPARATOR}{record.run_id}{_CURSOR_SEPARATOR}{record.attempt}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _position(cursor: str) -> tuple[str, int]:
    invalid = ValidationFailed(
        "invalid cursor",
        errors=[FieldError(loc=("cursor",), msg="not a cursor this service issued")],
    )
    try:
        text = base64.b64decode(
            cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True
        ).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise invalid from exc
    kind, _, rest = text.partition(_CURSOR_SEPARATOR)
    run_id, _, attempt = rest.rpartition(_CURSOR_SEPARATOR)
    if kind != "audit" or not run_id or not attempt.isdigit():
        raise invalid
    return run_id, int(attempt)


def _require_run(uow: UnitOfWork, tenant_id: str, run_id: str) -> Run:
    run = uow.runs.get(tenant_id, run_id)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    return run


class AuditService:
    """Reads, verifies and crypto-erases audit chains."""

    def __init__(
        self, uow: UnitOfWorkFactory, clock: Clock, keys: Sequence[PublicSigningKey]
    ) -> None:
        """``keys`` are the published verification keys (current and retired)."""
        self._uow = uow
        self._clock = clock
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
        next_cursor = _cursor(records[-1]) if more else None
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

    def erase_run(self, tenant_id: str, run_id: str, reason: str) -> int:
        """Crypto-erase every version 2 record of a run; return how many were newly erased.

        Raises AuditRecordNotErasable (and erases nothing) when the run holds a version 1 record.
        """
        with self._uow() as uow:
            _require_run(uow, tenant_id, run_id)
            now = self._clock.now()
            newly = 0
            for record in uow.audit.for_run(tenant_id, run_id):
                erased = crypto_erase(record, reason, now)
                if erased is not record:
                    uow.audit.store_erasure(erased)
                    newly += 1
            uow.commit()
        return newly
