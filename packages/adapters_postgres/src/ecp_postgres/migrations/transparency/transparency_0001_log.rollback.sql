DROP TRIGGER ecp_log_queue ON ecp_audit_records;
DROP FUNCTION ecp_log_queue();
DROP TABLE ecp_log_heads;
DROP TABLE ecp_log_tiles;
DROP TABLE ecp_log_leaves;
DROP TABLE ecp_log_pending;
