-- Graph versions, deployments, policies, contracts and runs.

CREATE TABLE ecp_graph_versions (
    tenant_id   text        NOT NULL,
    graph_id    text        NOT NULL,
    version     integer     NOT NULL CHECK (version >= 1),
    digest      text        NOT NULL,
    definition  jsonb       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, graph_id, version),
    UNIQUE (tenant_id, graph_id, digest)
);

CREATE TABLE ecp_deployments (
    tenant_id          text        NOT NULL,
    deployment_ref     text        NOT NULL,
    graph_id           text        NOT NULL,
    graph_version      integer     NOT NULL,
    graph_version_ref  text        NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, deployment_ref)
);

CREATE TABLE ecp_policies (
    tenant_id          text        NOT NULL,
    deployment_ref     text        NOT NULL,
    policy_id          text        NOT NULL,
    policy_version     integer     NOT NULL CHECK (policy_version >= 1),
    deny_capabilities  jsonb       NOT NULL,
    updated_at         timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, deployment_ref)
);

CREATE TABLE ecp_contracts (
    tenant_id    text        NOT NULL,
    name         text        NOT NULL,
    json_schema  jsonb       NOT NULL,
    metadata     jsonb       NOT NULL,
    digest       text        NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE ecp_runs (
    run_id                text COLLATE "C" PRIMARY KEY,
    tenant_id             text        NOT NULL,
    deployment_ref        text        NOT NULL,
    graph_version_ref     text        NOT NULL,
    thread_id             text        NOT NULL,
    status                text        NOT NULL,
    state                 jsonb       NOT NULL,
    next_node_id          text,
    steps                 integer     NOT NULL,
    attempts              integer     NOT NULL,
    failure_state         jsonb,
    paused                jsonb,
    pending_approval_ids  jsonb       NOT NULL,
    approved_action       jsonb,
    output                jsonb,
    parent_run_id         text,
    campaign_id           text,
    idempotency_key       text,
    request_digest        text,
    metadata              jsonb,
    artifacts             jsonb,
    error                 jsonb,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);

CREATE INDEX ecp_runs_by_tenant ON ecp_runs (tenant_id, run_id DESC);
CREATE UNIQUE INDEX ecp_runs_by_idempotency_key
    ON ecp_runs (tenant_id, deployment_ref, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX ecp_runs_runnable ON ecp_runs (run_id) WHERE status IN ('PENDING', 'RUNNING');
