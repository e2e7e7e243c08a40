DROP TABLE ecp_tasks;
