-- transactional: false
DROP INDEX CONCURRENTLY IF EXISTS ecp_log_heads_by_time;
