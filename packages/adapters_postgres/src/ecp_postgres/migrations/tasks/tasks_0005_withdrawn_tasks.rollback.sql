-- Refused while a withdrawn task exists: the older schema has no way to say what it is.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM ecp_tasks WHERE status = 'withdrawn') THEN
        RAISE EXCEPTION 'withdrawn tasks exist: tasks_0005 cannot be rolled back';
    END IF;
END $$;
ALTER TABLE ecp_tasks DROP CONSTRAINT ecp_tasks_status_check;
ALTER TABLE ecp_tasks ADD CONSTRAINT ecp_tasks_status_check
    CHECK (status IN ('waiting', 'locked', 'completed', 'failed'));
