DROP INDEX ecp_runs_dispatch_claims;
DROP INDEX ecp_runs_runnable_by_tenant;
CREATE INDEX ecp_runs_runnable ON ecp_runs (run_id) WHERE status IN ('PENDING', 'RUNNING');
DROP SEQUENCE ecp_run_dispatch_claims;
ALTER TABLE ecp_runs
    DROP COLUMN dispatch_claim,
    DROP COLUMN dispatch_not_before,
    DROP COLUMN dispatch_failures;
