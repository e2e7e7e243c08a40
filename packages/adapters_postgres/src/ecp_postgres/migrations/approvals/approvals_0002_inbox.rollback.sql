DROP INDEX ecp_approvals_by_deployment;
DROP INDEX ecp_approvals_by_status;
DROP INDEX ecp_approvals_by_tenant;
