CREATE INDEX ecp_runs_expired_without_canceled ON ecp_runs (tenant_id, updated_at)
    WHERE status IN ('COMPLETED', 'FAILED') AND erased_at IS NULL;
DROP INDEX ecp_runs_expired;
ALTER INDEX ecp_runs_expired_without_canceled RENAME TO ecp_runs_expired;
