DROP TRIGGER ecp_tasks_notify_waiting_again ON ecp_tasks;
DROP TRIGGER ecp_tasks_notify_offered ON ecp_tasks;
DROP FUNCTION ecp_tasks_notify();
