-- depends: approvals_0002_inbox
-- Approval rules (ADR 0075): each approval carries its node's rules, who started its run and the
-- approvals given so far. Every column is nullable or has a constant default, so adding them
-- rewrites no row and holds the table's lock only for the catalog change.

ALTER TABLE ecp_approvals
    ADD COLUMN min_approvals        integer NOT NULL DEFAULT 1,
    ADD COLUMN forbid_self_approval boolean NOT NULL DEFAULT false,
    ADD COLUMN approver_roles       jsonb,
    ADD COLUMN approver_subjects    jsonb,
    ADD COLUMN run_started_by       text,
    ADD COLUMN approvals            jsonb   NOT NULL DEFAULT '[]'::jsonb;
