DROP INDEX ecp_audit_by_deployment;
CREATE INDEX ecp_audit_by_deployment ON ecp_audit_records (tenant_id, deployment_ref, run_id, attempt);
