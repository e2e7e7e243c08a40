ALTER TABLE ecp_decision_schedules DROP COLUMN rollout_id;
