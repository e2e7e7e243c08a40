DROP TRIGGER ecp_runs_notify_moved ON ecp_runs;
DROP TRIGGER ecp_runs_notify_inserted ON ecp_runs;
DROP FUNCTION ecp_runs_notify();
