ALTER TABLE ecp_runs DROP COLUMN started_by;
