-- depends: tasks_0002_lock_expiry
-- A claim of several topics (topic = ANY(...)) gets no ordered path from ecp_tasks_open on
-- PostgreSQL 16: it sorted every claimable task of those topics on each claim (ADR 0068). This
-- index hands a tenant's open tasks over oldest first whatever their topic; the planner takes it
-- and filters by topic, stopping at the claim's limit, where the asked topics are common, and
-- ecp_tasks_open with a small sort where they are rare.
CREATE INDEX ecp_tasks_open_by_age
    ON ecp_tasks (tenant_id, created_at, task_id)
    WHERE status IN ('waiting', 'locked');
