-- depends: tasks_0004_offer_notifications
-- A canceled run withdraws its open tasks (ADR 0074): 'withdrawn' joins the statuses a task may
-- have. The new check is added NOT VALID and validated apart, so no step holds an exclusive lock
-- while the table is scanned.

ALTER TABLE ecp_tasks DROP CONSTRAINT ecp_tasks_status_check;
ALTER TABLE ecp_tasks ADD CONSTRAINT ecp_tasks_status_check
    CHECK (status IN ('waiting', 'locked', 'completed', 'failed', 'withdrawn')) NOT VALID;
ALTER TABLE ecp_tasks VALIDATE CONSTRAINT ecp_tasks_status_check;
