ALTER TABLE ecp_runs DROP COLUMN arm, DROP COLUMN rollout_id;
