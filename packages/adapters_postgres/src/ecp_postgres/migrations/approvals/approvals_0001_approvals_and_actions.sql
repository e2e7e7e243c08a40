-- depends: core_0001_graphs_deployments_runs

CREATE TABLE ecp_approvals (
    approval_id            text COLLATE "C" PRIMARY KEY,
    tenant_id              text        NOT NULL,
    run_id                 text        NOT NULL,
    node_id                text        NOT NULL,
    graph_version_ref      text        NOT NULL,
    deployment_ref         text        NOT NULL,
    summary                text        NOT NULL,
    rationale              text        NOT NULL,
    status                 text        NOT NULL,
    interaction_type       text        NOT NULL,
    requested_decision     text        NOT NULL,
    allowed_actions        jsonb       NOT NULL,
    proposed_payload       jsonb,
    context_excerpt        jsonb       NOT NULL,
    urgency_metadata       jsonb       NOT NULL,
    requested_by           jsonb,
    resolution             jsonb,
    resolution_schema_ref  text,
    sla_deadline           timestamptz,
    escalated_from_id      text,
    escalation_action      text,
    thread_id              text,
    workspace_id           text,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);

CREATE INDEX ecp_approvals_by_run ON ecp_approvals (tenant_id, run_id, created_at, approval_id);
CREATE INDEX ecp_approvals_overdue ON ecp_approvals (sla_deadline, approval_id)
    WHERE status = 'pending' AND sla_deadline IS NOT NULL;

CREATE TABLE ecp_approval_actions (
    sequence     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text        NOT NULL,
    approval_id  text        NOT NULL,
    action       text        NOT NULL,
    actor        jsonb,
    metadata     jsonb       NOT NULL,
    occurred_at  timestamptz NOT NULL
);

CREATE INDEX ecp_approval_actions_by_approval ON ecp_approval_actions (tenant_id, approval_id, sequence);
