-- depends: core_0008_tenant_in_moved_notifications
-- Who started a run (ADR 0075): the caller's subject, which four-eyes approval rules compare with
-- an approver's. Nullable and without a default, so adding it rewrites no row; runs started
-- before it have none.

ALTER TABLE ecp_runs ADD COLUMN started_by text;
