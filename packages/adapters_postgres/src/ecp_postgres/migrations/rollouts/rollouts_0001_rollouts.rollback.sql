DROP TABLE ecp_rollout_assignments;
DROP TABLE ecp_rollouts;
