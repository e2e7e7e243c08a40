"""AuditRepository in memory."""

import copy
from collections.abc import Sequence
from datetime import datetime

import attrs

from ecp_core.audit.erasure import check_erasure
from ecp_core.audit.record import (
    ERASABLE_DIGEST_VERSIONS,
    ChainHead,
    NodeAuditRecord,
    RunChain,
    StoredRecord,
    not_extending,
)
from ecp_core.audit.settings import AuditSettings
from ecp_core.audit.stored import kept_texts, stored_record
from ecp_core.errors import missing
from ecp_core.memory.retention import held
from ecp_core.memory.tables import Repository, detached
from ecp_core.memory.transparency import queue_leaf
from ecp_core.transparency.model import PendingLeaf


class MemoryAudit(Repository):
    """Records by id, each run's chain as a list of ids, and each run's chain head.

    A version 3 record's salt lives apart, in ``audit_salts`` by audit id: the record is stored
    without it, reads join it back, and erasure removes it. Like PostgreSQL's ``json`` columns,
    ``audit_texts`` keeps the canonical text of each personal-data value as appended (ADR 0069),
    so verification proves a record by hashing them; erasure removes them with the values.
    """

    def _joined(self, record: NodeAuditRecord) -> NodeAuditRecord:
        salt: str | None = self._t.table("audit_salts").get(record.audit_id)
        return record if salt is None else attrs.evolve(record, pii_salt=salt)

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
        self._t.put("audit", record.audit_id, attrs.evolve(record, pii_salt=None))
        texts = None if record.erased else kept_texts(record)
        if texts is not None:
            self._t.put("audit_texts", record.audit_id, texts)
        if record.pii_salt is not None:
            self._t.put("audit_salts", record.audit_id, record.pii_salt)
        self._t.put("audit_heads", record.run_id, new_head)
        queue_leaf(self, record.tenant_id, PendingLeaf(record.audit_id, record.record_digest))
        return new_head

    def _stored_chain(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """The tenant's records of the run's chain as stored (not copied, salts apart)."""
        records = self._t.table("audit")
        chain = [records[audit_id] for audit_id in self._t.table("audit_chains").get(run_id, [])]
        return [record for record in chain if record.tenant_id == tenant_id]

    @detached
    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        return [self._joined(record) for record in self._stored_chain(tenant_id, run_id)]

    def chain_run_ids(self, tenant_id: str, deployment_ref: str) -> list[str]:
        """The runs of a deployment that have audit records, in code-point order."""
        records = self._t.table("audit")
        return [
            run_id
            for run_id, chain in sorted(self._t.table("audit_chains").items())
            if any(
                records[audit_id].tenant_id == tenant_id
                and records[audit_id].deployment_ref == deployment_ref
                for audit_id in chain
            )
        ]

    def _entry(self, record: NodeAuditRecord) -> NodeAuditRecord | StoredRecord:
        """A record as verification reads it: with its kept texts, or copied whole without."""
        joined = self._joined(record)
        texts = self._t.table("audit_texts").get(record.audit_id)
        if texts is None:
            return copy.deepcopy(joined)
        return stored_record(joined, texts, load=lambda: copy.deepcopy(joined))

    def chains(self, tenant_id: str, run_ids: Sequence[str]) -> list[RunChain]:
        """Each run's records and chain head (the unit of work holds the store).

        A record with kept texts comes as stored (proven from them); any other as a copy.
        """
        return [
            RunChain(
                run_id=run_id,
                entries=tuple(map(self._entry, self._stored_chain(tenant_id, run_id))),
                head=self.head(run_id),
            )
            for run_id in run_ids
        ]

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
        if record is None or record.tenant_id != tenant_id:
            return None
        return self._joined(record)

    def many(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, NodeAuditRecord]:
        """The tenant's records among ``audit_ids``."""
        found = (self.get(tenant_id, audit_id) for audit_id in audit_ids)
        return {record.audit_id: record for record in found if record is not None}

    @detached
    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Unerased version 2 and 3 records created before the instant, oldest first."""
        found = [
            r
            for r in self._t.table("audit").values()
            if r.tenant_id == tenant_id
            and not held(self._t, tenant_id, r.run_id)
            and r.digest_version in ERASABLE_DIGEST_VERSIONS
            and not r.erased
            and r.created_at < created_before
        ]
        ordered = sorted(found, key=lambda r: (r.created_at, r.audit_id))[:limit]
        return [self._joined(record) for record in ordered]

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erasure; refuse any change beyond personal data and erasure fields."""
        stored = self.get(record.tenant_id, record.audit_id)
        if stored is None:
            raise missing("audit record", record.audit_id)
        check_erasure(stored, record)
        self._t.put("audit", record.audit_id, record)
        self._t.remove("audit_salts", record.audit_id)
        self._t.remove("audit_texts", record.audit_id)

    @detached
    def settings(self, tenant_id: str) -> AuditSettings | None:
        """The tenant's stored audit settings, or None."""
        found: AuditSettings | None = self._t.table("audit_settings").get(tenant_id)
        return found

    def save_settings(self, settings: AuditSettings) -> None:
        """Store a tenant's audit settings, replacing any earlier ones."""
        self._t.put("audit_settings", settings.tenant_id, settings)
