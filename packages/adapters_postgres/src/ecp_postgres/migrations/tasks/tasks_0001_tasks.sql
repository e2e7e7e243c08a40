-- depends: core_0001_graphs_deployments_runs
-- External tasks: the queue task nodes offer work on and workers claim it from (ADR 0030).
-- A claim takes claimable rows of a tenant's topics by (created_at, task_id) with
-- FOR UPDATE SKIP LOCKED; the rules of each change are the core's (ecp_core.tasks.rules).
-- Ids use the "C" collation, so ordering is by code point on any server, exactly like the
-- in-memory adapter.

CREATE TABLE ecp_tasks (
    task_id       text COLLATE "C" PRIMARY KEY,
    tenant_id     text        NOT NULL,
    run_id        text        NOT NULL,
    node_id       text        NOT NULL,
    topic         text        NOT NULL,
    arguments     jsonb       NOT NULL,
    state         jsonb       NOT NULL,
    status        text        NOT NULL
        CHECK (status IN ('waiting', 'locked', 'completed', 'failed')),
    attempt       integer     NOT NULL CHECK (attempt >= 0),
    max_attempts  integer     NOT NULL CHECK (max_attempts >= 1),
    lock_seconds  integer     NOT NULL CHECK (lock_seconds BETWEEN 1 AND 3600),
    worker_id     text,
    lock_token    text,
    locked_until  timestamptz,
    not_before    timestamptz,
    output        jsonb,
    error         text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- The claim: a tenant's open tasks of a topic, oldest first.
CREATE INDEX ecp_tasks_open
    ON ecp_tasks (tenant_id, topic, created_at, task_id)
    WHERE status IN ('waiting', 'locked');
-- The operators' listing: a tenant's tasks by id.
CREATE INDEX ecp_tasks_by_tenant ON ecp_tasks (tenant_id, task_id);
