"""AuditRepository in memory."""

from datetime import datetime

from ecp_core.audit.erasure import check_erasure
from ecp_core.audit.record import DIGEST_VERSION, ChainHead, NodeAuditRecord, not_extending
from ecp_core.errors import missing
from ecp_core.memory.retention import held
from ecp_core.memory.tables import Repository, detached


class MemoryAudit(Repository):
    """Records by id, each run's chain as a list of ids, and each run's chain head."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head."""
        found: ChainHead | None = self._t.table("audit_heads").get(run_id)
        return found

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Extend the chain by ``record``."""
        head = self.head(record.run_id)
        expected_attempt = 1 if head is None else head.attempt + 1
        expected_previous = None if head is None else head.record_digest
        if record.attempt != expected_attempt or record.previous_record_digest != expected_previous:
            raise not_extending(record)
        new_head = ChainHead(
            run_id=record.run_id, attempt=record.attempt, record_digest=record.record_digest
        )
        self._t.append("audit_chains", record.run_id, record.audit_id)
        self._t.put("audit", record.audit_id, record)
        self._t.put("audit_heads", record.run_id, new_head)
        return new_head

    @detached
    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        records = self._t.table("audit")
        chain = [records[audit_id] for audit_id in self._t.table("audit_chains").get(run_id, [])]
        return [record for record in chain if record.tenant_id == tenant_id]

    @detached
    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id, then chain order, after ``after``."""
        run_ids = [run_id] if run_id is not None else sorted(self._t.table("audit_chains"))
        found = [
            record
            for rid in run_ids
            for record in self.for_run(tenant_id, rid)
            if record.deployment_ref == deployment_ref
            and (after is None or (record.run_id, record.attempt) > after)
        ]
        return found if limit is None else found[:limit]

    @detached
    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        record: NodeAuditRecord | None = self._t.table("audit").get(audit_id)
        return record if record is not None and record.tenant_id == tenant_id else None

    @detached
    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Unerased version 2 records created before the instant, oldest first."""
        found = [
            r
            for r in self._t.table("audit").values()
            if r.tenant_id == tenant_id
            and not held(self._t, tenant_id, r.run_id)
            and r.digest_version == DIGEST_VERSION
            and not r.erased
            and r.created_at < created_before
        ]
        return sorted(found, key=lambda r: (r.created_at, r.audit_id))[:limit]

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erasure; refuse any change beyond personal data and erasure fields."""
        stored = self.get(record.tenant_id, record.audit_id)
        if stored is None:
            raise missing("audit record", record.audit_id)
        check_erasure(stored, record)
        self._t.put("audit", record.audit_id, record)
