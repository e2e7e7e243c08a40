DROP INDEX ecp_audit_aged;
CREATE INDEX ecp_audit_aged ON ecp_audit_records (tenant_id, created_at)
    WHERE digest_version = 2 AND NOT erased;
