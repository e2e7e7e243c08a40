"""AuditRepository on PostgreSQL: records, chain heads, version 3 salts and tenant settings."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
from psycopg.types.json import Json

from ecp_core.audit.erasure import ERASABLE_FIELDS, SALT_FIELD, check_erasure
from ecp_core.audit.record import (
    ERASABLE_DIGEST_VERSIONS,
    PII_FIELDS,
    ChainHead,
    NodeAuditRecord,
    RunChain,
    not_extending,
)
from ecp_core.audit.settings import AuditSettings
from ecp_core.errors import ChainConflict, missing
from ecp_postgres.audit_chains import read_chain_run_ids, read_chains, stored_text
from ecp_postgres.retention import not_held
from ecp_postgres.rows import Repository, Table
from ecp_postgres.session import PendingWrite


class _RecordTable(Table[NodeAuditRecord]):
    """Records are written without their salt and read with it joined from ``ecp_audit_salts``."""

    def select_sql(self) -> str:
        """``SELECT`` of every column of the record, the salt (hex, or null) joined."""
        return (
            f"SELECT {self.column_list}, encode(ecp_audit_salts.salt, 'hex') AS {SALT_FIELD}"  # noqa: S608
            f" FROM {self.name} LEFT JOIN ecp_audit_salts USING (audit_id)"
        )

    def load(self, row: Mapping[str, Any]) -> NodeAuditRecord:
        """Build the record, its salt included."""
        record = super().load(row)
        salt = row.get(SALT_FIELD)
        return record if salt is None else attrs.evolve(record, pii_salt=salt)

    def _param(self, column: str, value: Any) -> Any:  # noqa: ANN401
        """Personal-data ``json`` columns hold their canonical text when it reads back unchanged.

        Verification hashes that text as stored (:func:`ecp_postgres.audit_chains.stored_text`).
        """
        param = super()._param(column, value)
        return Json(param.obj, dumps=stored_text) if isinstance(param, Json) else param


AUDIT = _RecordTable(
    "ecp_audit_records",
    NodeAuditRecord,
    jsonb=["pii_commitments"],
    json=[field for field in PII_FIELDS if field not in ("stdout", "stderr")],
    skip=[SALT_FIELD],
)
SETTINGS = Table("ecp_audit_settings", AuditSettings)
ERASABLE_VERSIONS_SQL = ", ".join(str(int(version)) for version in ERASABLE_DIGEST_VERSIONS)
"""The erasable digest versions as SQL literals: the predicate of the ``ecp_audit_aged`` index."""


ERASURE_SQL = (
    "UPDATE ecp_audit_records SET "  # noqa: S608 - fixed column names
    + ", ".join(f"{f} = %({f})s" for f in sorted(ERASABLE_FIELDS) if f != SALT_FIELD)
    + " WHERE audit_id = %(audit_id)s"
)
"""What an erasure changes in a stored record (its salt is a row of its own, dropped with it)."""
DROP_SALT_SQL = "DELETE FROM ecp_audit_salts WHERE audit_id = %s"
"""A record's version 3 salt, dropped when its personal data is erased."""


def head_key(run_id: str) -> tuple[str, str]:
    """The memo key of a run's chain head (see :mod:`ecp_postgres.session`)."""
    return ("audit_head", run_id)


def settings_key(tenant_id: str) -> tuple[str, str]:
    """The memo key of a tenant's audit settings."""
    return ("audit_settings", tenant_id)


def head_move(
    head: ChainHead, since: tuple[int | None, str | None], record: NodeAuditRecord
) -> PendingWrite:
    """Move the chain head to ``head`` from ``since`` (attempt, digest; 0 and None: no chain)."""
    attempt, digest = since
    values = {
        "run_id": head.run_id,
        "attempt": head.attempt,
        "record_digest": head.record_digest,
        "from_attempt": attempt,
        "from_digest": digest,
    }
    if attempt == 0 and digest is None:
        sql = (
            "INSERT INTO ecp_audit_heads (run_id, attempt, record_digest)"
            " VALUES (%(run_id)s, %(attempt)s, %(record_digest)s) ON CONFLICT DO NOTHING"
        )
    else:
        sql = (
            "UPDATE ecp_audit_heads SET attempt = %(attempt)s, record_digest = %(record_digest)s"
            " WHERE run_id = %(run_id)s AND attempt = %(from_attempt)s"
            " AND record_digest = %(from_digest)s"
        )
    return PendingWrite(sql, values, expected=1, error=lambda: not_extending(record))


class PostgresAudit(Repository):
    """AuditRepository on PostgreSQL; the head row is locked while a chain is extended."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head, row-locked until the transaction ends.

        Read once per transaction: the run's lock (``PostgresRuns.lock``) or an earlier call
        remembers it, and each append moves it.
        """
        memo = self._memo()
        key = head_key(run_id)
        if key not in memo:
            row = self._conn.execute(
                "SELECT run_id, attempt, record_digest FROM ecp_audit_heads"
                " WHERE run_id = %s FOR UPDATE",
                (run_id,),
            ).fetchone()
            memo[key] = None if row is None else ChainHead(**row)
        head: ChainHead | None = memo[key]
        return head

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Extend the chain by ``record`` (ChainConflict unless it follows the current head).

        The head moves only from exactly the predecessor the record names, so no separate read
        is needed: a head that moved meanwhile matches no row. The writes wait in the unit of
        work's batch; several appends to one chain in a transaction move its head once, from
        where the transaction found it.
        """
        new_head = ChainHead(
            run_id=record.run_id, attempt=record.attempt, record_digest=record.record_digest
        )
        key = head_key(record.run_id)
        queued = self._pending(key)
        if queued is not None:
            if (queued.params["attempt"], queued.params["record_digest"]) != (
                record.attempt - 1,
                record.previous_record_digest,
            ):
                raise not_extending(record)
            since = queued.params.get("from_attempt"), queued.params.get("from_digest")
        else:
            since = record.attempt - 1, record.previous_record_digest
        self._write(head_move(new_head, since, record), key)
        self._write(
            PendingWrite(
                AUDIT.insert_sql(on_conflict_nothing=True),
                AUDIT.params(record),
                expected=1,
                error=lambda: ChainConflict(f"record {record.audit_id} exists"),
            )
        )
        if record.pii_salt is not None:
            self._write(
                PendingWrite(
                    "INSERT INTO ecp_audit_salts (audit_id, salt) VALUES (%(audit_id)s, %(salt)s)",
                    {"audit_id": record.audit_id, "salt": bytes.fromhex(record.pii_salt)},
                )
            )
        self._memo()[key] = new_head
        return new_head

    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        return self._all(
            AUDIT, "WHERE tenant_id = %s AND run_id = %s ORDER BY attempt", (tenant_id, run_id)
        )

    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id (code-point order), then chain order."""
        where = ["tenant_id = %s", "deployment_ref = %s"]
        params: list[Any] = [tenant_id, deployment_ref]
        if run_id is not None:
            where.append("run_id = %s")
            params.append(run_id)
        if after is not None:
            where.append('(run_id COLLATE "C", attempt) > (%s, %s)')
            params.extend(after)
        tail = f'WHERE {" AND ".join(where)} ORDER BY run_id COLLATE "C", attempt'
        if limit is not None:
            tail += " LIMIT %s"
            params.append(limit)
        return self._all(AUDIT, tail, tuple(params))

    def chain_run_ids(self, tenant_id: str, deployment_ref: str) -> list[str]:
        """The runs of a deployment that have audit records (:mod:`ecp_postgres.audit_chains`)."""
        return read_chain_run_ids(self._conn, tenant_id, deployment_ref)

    def chains(self, tenant_id: str, run_ids: Sequence[str]) -> list[RunChain]:
        """Records and heads in one snapshot, without locks (:mod:`ecp_postgres.audit_chains`)."""
        return read_chains(self._conn, AUDIT, tenant_id, run_ids)

    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        return self._one(AUDIT, "audit_id = %s AND tenant_id = %s", (audit_id, tenant_id))

    def many(self, tenant_id: str, audit_ids: Sequence[str]) -> dict[str, NodeAuditRecord]:
        """The tenant's records among ``audit_ids``, in one statement."""
        found = self._all(
            AUDIT, "WHERE tenant_id = %s AND audit_id = ANY(%s)", (tenant_id, list(audit_ids))
        )
        return {record.audit_id: record for record in found}

    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Unerased, unheld version 2 and 3 records created before the instant, oldest first.

        The digest versions are literals, not parameters, so the partial index always applies.
        """
        return self._all(
            AUDIT,
            f"WHERE tenant_id = %s AND digest_version IN ({ERASABLE_VERSIONS_SQL}) AND NOT erased"
            f" AND created_at < %s AND {not_held('ecp_audit_records')}"
            ' ORDER BY created_at, audit_id COLLATE "C" LIMIT %s',
            (tenant_id, created_before, limit),
        )

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erasure; refuse any change beyond personal data and erasure fields."""
        stored = self.get(record.tenant_id, record.audit_id)
        if stored is None:
            raise missing("audit record", record.audit_id)
        check_erasure(stored, record)
        self._conn.execute(ERASURE_SQL, AUDIT.params(record))
        self._conn.execute(DROP_SALT_SQL, (record.audit_id,))

    def settings(self, tenant_id: str) -> AuditSettings | None:
        """The tenant's stored audit settings, or None (read once per transaction)."""
        memo = self._memo()
        key = settings_key(tenant_id)
        if key not in memo:
            memo[key] = self._one(SETTINGS, "tenant_id = %s", (tenant_id,))
        settings: AuditSettings | None = memo[key]
        return settings

    def save_settings(self, settings: AuditSettings) -> None:
        """Store a tenant's audit settings, replacing any earlier ones."""
        self._memo().pop(settings_key(settings.tenant_id), None)
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in SETTINGS.columns if c != "tenant_id")
        self._conn.execute(
            f"{SETTINGS.insert_sql()} ON CONFLICT (tenant_id) DO UPDATE SET {updates}",
            SETTINGS.params(settings),
        )
