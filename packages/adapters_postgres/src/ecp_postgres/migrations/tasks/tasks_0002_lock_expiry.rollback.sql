DROP INDEX ecp_tasks_by_run;
DROP INDEX ecp_tasks_lock_expiry;
