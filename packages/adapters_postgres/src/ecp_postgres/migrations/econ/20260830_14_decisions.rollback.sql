DROP TABLE IF EXISTS ecp_decision_schedules;
DROP TABLE IF EXISTS ecp_decisions;
