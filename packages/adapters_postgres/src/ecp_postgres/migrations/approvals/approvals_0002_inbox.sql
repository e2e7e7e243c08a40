-- depends: approvals_0001_approvals_and_actions
-- The approver inbox, GET /v1/approvals (ADR 0029): a tenant's approvals in id order, by status
-- (pending, the inbox proper) and by deployment. The run filter uses ecp_approvals_by_run.

CREATE INDEX ecp_approvals_by_tenant ON ecp_approvals (tenant_id, approval_id);
CREATE INDEX ecp_approvals_by_status ON ecp_approvals (tenant_id, status, approval_id);
CREATE INDEX ecp_approvals_by_deployment ON ecp_approvals (tenant_id, deployment_ref, approval_id);
