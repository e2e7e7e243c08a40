DROP INDEX ecp_runs_timers_due;
ALTER TABLE ecp_runs DROP COLUMN wait_until;
