-- depends: retention_0001_policies_holds_log audit_0002_salts
-- The audit TTL sweep tombstones every erasable version, 2 and 3 (ADR 0047), with the predicate
-- the store's query states (ecp_postgres.audit.PostgresAudit.aged), so the partial index applies.

DROP INDEX ecp_audit_aged;
CREATE INDEX ecp_audit_aged ON ecp_audit_records (tenant_id, created_at)
    WHERE digest_version IN (2, 3) AND NOT erased;
