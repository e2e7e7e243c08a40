DROP TABLE ecp_audit_heads;
DROP TABLE ecp_audit_records;
