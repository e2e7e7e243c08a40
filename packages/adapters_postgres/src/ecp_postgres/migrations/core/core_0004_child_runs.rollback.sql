DROP INDEX ecp_runs_children;
ALTER TABLE ecp_runs DROP COLUMN ancestor_run_ids;
