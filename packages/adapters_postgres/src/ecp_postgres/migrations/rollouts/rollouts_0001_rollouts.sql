-- depends: core_0014_run_rollout_arm
-- Randomized rollouts (ADR 0089). A rollout holds its arms (with the buckets each owns) and its
-- secret assignment key; a partial unique index keeps one active rollout per deployment. Each
-- unit's first assignment in a weight period is kept once (the primary key), and read back per
-- period for verification. Ids compare by code point (ecp_core.pages), so the primary key orders
-- GET /v1/rollouts.
CREATE TABLE ecp_rollouts (
    tenant_id                   text              NOT NULL,
    rollout_id                  text COLLATE "C"  NOT NULL,
    deployment_ref              text              NOT NULL,
    unit                        text              NOT NULL CHECK (unit IN ('run', 'subject')),
    arms                        jsonb             NOT NULL,
    status                      text              NOT NULL CHECK (status IN ('active', 'ended')),
    key                         text              NOT NULL,
    period                      integer           NOT NULL CHECK (period >= 1),
    created_at                  timestamptz       NOT NULL,
    updated_at                  timestamptz       NOT NULL,
    promoted_graph_version_ref  text,
    PRIMARY KEY (tenant_id, rollout_id)
);

CREATE UNIQUE INDEX ecp_rollouts_one_active ON ecp_rollouts (tenant_id, deployment_ref)
    WHERE status = 'active';

CREATE TABLE ecp_rollout_assignments (
    tenant_id    text         NOT NULL,
    rollout_id   text         NOT NULL,
    period       integer      NOT NULL,
    unit_id      text         NOT NULL,
    arm          integer      NOT NULL CHECK (arm >= 0),
    assigned_at  timestamptz  NOT NULL,
    PRIMARY KEY (tenant_id, rollout_id, period, unit_id),
    FOREIGN KEY (tenant_id, rollout_id) REFERENCES ecp_rollouts (tenant_id, rollout_id)
);
