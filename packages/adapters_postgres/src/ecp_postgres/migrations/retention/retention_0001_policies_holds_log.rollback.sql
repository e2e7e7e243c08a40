DROP INDEX ecp_audit_aged;
DROP INDEX ecp_runs_expired;
ALTER TABLE ecp_runs DROP COLUMN erased_at;
DROP TABLE ecp_retention_audit_log;
DROP TABLE ecp_legal_holds;
DROP TABLE ecp_retention_policies;
