"""RetentionRepository on PostgreSQL: policies, legal holds and the retention audit log.

The system row (:data:`ecp_core.retention.model.SYSTEM_POLICY`) is seeded by the retention
migration; ``test_the_system_row_is_the_core_s`` (tests/storage/test_mirrored_adapters_contract.py)
holds the two equal.
"""

from ecp_core.errors import exists, missing
from ecp_core.retention.model import SYSTEM_TENANT, LegalHold, RetentionAuditEntry, RetentionPolicy
from ecp_postgres.rows import Repository, Table

RETENTION_POLICIES = Table("ecp_retention_policies", RetentionPolicy)
LEGAL_HOLDS = Table("ecp_legal_holds", LegalHold)
RETENTION_LOG = Table("ecp_retention_audit_log", RetentionAuditEntry, jsonb=["detail"])
LOCK_NAMESPACE = "ecp.retention:"
"""Prefix of the advisory lock keys, apart from any other advisory lock user of the database."""


def not_held(table: str) -> str:
    """SQL: rows of ``table`` whose run no active legal hold covers (held runs are left out).

    The SQL twin of :meth:`ecp_core.retention.model.LegalHold.covers` (active, same tenant, the
    whole tenant, this run or one of its ancestors), as the memory adapter applies it; the
    contract tests ``test_hold_coverage_is_the_core_s`` (tests/storage/test_mirrored_adapters_contract.py)
    and ``test_a_hold_on_a_parent_covers_its_descendants_in_selection``
    (tests/children/test_child_runs_contract.py) hold them equal.
    """
    holds = "SELECT 1 FROM ecp_legal_holds h WHERE h.released_at IS NULL"
    lineage = (
        f"SELECT 1 FROM ecp_runs l WHERE l.run_id = {table}.run_id"  # noqa: S608 - names are ours
        f" AND l.tenant_id = {table}.tenant_id"
        " AND l.ancestor_run_ids @> jsonb_build_array(h.run_id)"
    )
    return (
        f"NOT EXISTS ({holds} AND h.tenant_id = {table}.tenant_id"
        f" AND (h.run_id IS NULL OR h.run_id = {table}.run_id OR EXISTS ({lineage})))"
    )


class PostgresRetention(Repository):
    """RetentionRepository on PostgreSQL; the ``default`` system row is seeded by the migration."""

    def lock_tenant(self, tenant_id: str, *, exclusive: bool) -> None:
        """Hold the tenant's retention lock (a transaction-level advisory lock) until commit.

        Erasures take it shared and new holds exclusively. The key hashes the tenant id: tenants
        whose keys collide only wait for each other more often.
        """
        function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        self._conn.execute(
            f"SELECT {function}(hashtextextended(%s, 0))",
            (LOCK_NAMESPACE + tenant_id,),
        )

    def policy(self, tenant_id: str) -> RetentionPolicy | None:
        """The stored policy row, or None."""
        return self._one(RETENTION_POLICIES, "tenant_id = %s", (tenant_id,))

    def put_policy(self, policy: RetentionPolicy) -> None:
        """Store a policy row, replacing any earlier one."""
        sets = ", ".join(
            f"{c} = EXCLUDED.{c}" for c in RETENTION_POLICIES.columns if c != "tenant_id"
        )
        self._conn.execute(
            f"{RETENTION_POLICIES.insert_sql()} ON CONFLICT (tenant_id) DO UPDATE SET {sets}",
            RETENTION_POLICIES.params(policy),
        )

    def policy_tenants(self) -> list[str]:
        """Tenants with a policy row of their own (not the system row), in order."""
        rows = self._conn.execute(
            "SELECT tenant_id FROM ecp_retention_policies WHERE tenant_id <> %s ORDER BY tenant_id",
            (SYSTEM_TENANT,),
        ).fetchall()
        return [row["tenant_id"] for row in rows]

    def add_hold(self, hold: LegalHold) -> None:
        """Store a new hold (Conflict when its id exists, in any tenant)."""
        self._insert(LEGAL_HOLDS, hold, exists("hold", hold.hold_id))

    def hold(self, tenant_id: str, hold_id: str) -> LegalHold | None:
        """One hold of the tenant, or None."""
        return self._one(LEGAL_HOLDS, "hold_id = %s AND tenant_id = %s", (hold_id, tenant_id))

    def holds(self, tenant_id: str, *, active_only: bool = False) -> list[LegalHold]:
        """The tenant's holds (only unreleased ones when ``active_only``), oldest first."""
        active = " AND released_at IS NULL" if active_only else ""
        return self._all(
            LEGAL_HOLDS,
            f"WHERE tenant_id = %s{active} ORDER BY created_at, hold_id",
            (tenant_id,),
        )

    def save_hold(self, hold: LegalHold) -> None:
        """Replace a stored hold of the same tenant (NotFound otherwise)."""
        sql = LEGAL_HOLDS.update_sql("hold_id") + " AND tenant_id = %(tenant_id)s"
        if self._conn.execute(sql, LEGAL_HOLDS.params(hold)).rowcount != 1:
            raise missing("hold", hold.hold_id)

    def append_log(self, entry: RetentionAuditEntry) -> None:
        """Append to the log (Conflict when the entry id exists)."""
        self._insert(RETENTION_LOG, entry, exists("retention log entry", entry.entry_id))

    def log(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[RetentionAuditEntry]:
        """The tenant's entries by entry id, newest first, older than ``before`` when given."""
        if before is None:
            return self._all(
                RETENTION_LOG,
                "WHERE tenant_id = %s ORDER BY entry_id DESC LIMIT %s",
                (tenant_id, limit),
            )
        return self._all(
            RETENTION_LOG,
            "WHERE tenant_id = %s AND entry_id < %s ORDER BY entry_id DESC LIMIT %s",
            (tenant_id, before, limit),
        )
