CREATE INDEX ecp_audit_by_deployment_by_default
    ON ecp_audit_records (tenant_id, deployment_ref, run_id, attempt);
DROP INDEX ecp_audit_by_deployment;
ALTER INDEX ecp_audit_by_deployment_by_default RENAME TO ecp_audit_by_deployment;
