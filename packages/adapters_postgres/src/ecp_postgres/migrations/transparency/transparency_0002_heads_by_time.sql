-- depends: transparency_0001_log
-- transactional: false
-- An audit export (ADR 0088) finds the checkpoints around a time window: the newest signed at
-- or before its start and the oldest at or after its end. Built concurrently: heads are written
-- every second a tenant's log grows, and the build must not stop them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS ecp_log_heads_by_time ON ecp_log_heads (tenant_id, created_at);
