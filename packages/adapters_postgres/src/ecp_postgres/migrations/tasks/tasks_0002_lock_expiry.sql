-- depends: tasks_0001_tasks
-- The lock-expiry sweep: locked tasks of every tenant by the time their lock runs out.
CREATE INDEX ecp_tasks_lock_expiry ON ecp_tasks (locked_until, task_id) WHERE status = 'locked';
-- The erasure of a run empties its tasks' payloads.
CREATE INDEX ecp_tasks_by_run ON ecp_tasks (tenant_id, run_id);
