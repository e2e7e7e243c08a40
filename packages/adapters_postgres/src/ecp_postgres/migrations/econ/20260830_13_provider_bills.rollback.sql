DROP INDEX IF EXISTS ecp_evidence_executions_provider;
DROP TABLE IF EXISTS provider_cost_buckets;
DROP TABLE IF EXISTS provider_bills;
