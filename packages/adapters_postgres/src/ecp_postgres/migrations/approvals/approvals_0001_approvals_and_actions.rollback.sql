DROP TABLE ecp_approval_actions;
DROP TABLE ecp_approvals;
