DROP INDEX ecp_tasks_open_by_age;
