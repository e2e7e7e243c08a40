DROP TABLE ecp_evidence_definitions;
DROP TABLE ecp_evidence_inventories;
DROP TABLE ecp_evidence_revisions;
DROP TABLE ecp_evidence_outcomes;
DROP TABLE ecp_evidence_executions;
