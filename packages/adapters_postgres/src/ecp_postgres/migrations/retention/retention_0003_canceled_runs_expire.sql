-- depends: retention_0002_aged_salted_records
-- A canceled run is terminal, so the run TTL erases it as it erases completed and failed runs
-- (ADR 0074). The sweep's partial index gains the status; the new one is built before the old one
-- is dropped, so the sweep keeps an index throughout.

CREATE INDEX ecp_runs_expired_with_canceled ON ecp_runs (tenant_id, updated_at)
    WHERE status IN ('COMPLETED', 'FAILED', 'CANCELED') AND erased_at IS NULL;
DROP INDEX ecp_runs_expired;
ALTER INDEX ecp_runs_expired_with_canceled RENAME TO ecp_runs_expired;
