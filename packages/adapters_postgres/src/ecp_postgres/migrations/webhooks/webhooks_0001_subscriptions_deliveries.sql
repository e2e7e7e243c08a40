-- depends: core_0001_graphs_deployments_runs
-- Webhooks: subscriptions, the delivery outbox and each delivery's attempts.
-- A deleted subscription keeps its row (deleted_at set), so the deliveries that name it still
-- resolve to a target; only live rows are listed or matched. The secret is stored as given:
-- the delivery worker signs every body with it.
-- Ids that are sorted or paged on use the "C" collation, so ordering is by code point on any
-- server, exactly like the in-memory adapter.

CREATE TABLE ecp_webhook_subscriptions (
    subscription_id  text COLLATE "C" PRIMARY KEY,
    tenant_id        text        NOT NULL,
    deployment_ref   text        NOT NULL,
    target_url       text        NOT NULL,
    event_types      jsonb       NOT NULL,
    secret           text        NOT NULL,
    created_at       timestamptz NOT NULL,
    deleted_at       timestamptz
);

CREATE INDEX ecp_webhook_subscriptions_by_tenant
    ON ecp_webhook_subscriptions (tenant_id, created_at, subscription_id)
    WHERE deleted_at IS NULL;
CREATE INDEX ecp_webhook_subscriptions_by_deployment
    ON ecp_webhook_subscriptions (tenant_id, deployment_ref)
    WHERE deleted_at IS NULL;

CREATE TABLE ecp_webhook_deliveries (
    delivery_id       text COLLATE "C" PRIMARY KEY,
    tenant_id         text        NOT NULL,
    subscription_id   text        NOT NULL,
    event_id          text        NOT NULL,
    event_type        text        NOT NULL,
    payload           jsonb       NOT NULL,
    status            text        NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts          integer     NOT NULL,
    next_attempt_at   timestamptz NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    last_status_code  integer,
    last_error        text,
    replay_of         text
);

-- The worker's claim: pending deliveries by due time (FOR UPDATE SKIP LOCKED).
CREATE INDEX ecp_webhook_deliveries_due
    ON ecp_webhook_deliveries (next_attempt_at, delivery_id)
    WHERE status = 'pending';
-- A tenant's dead letters, newest first by id.
CREATE INDEX ecp_webhook_deliveries_dead
    ON ecp_webhook_deliveries (tenant_id, delivery_id)
    WHERE status = 'dead';

CREATE TABLE ecp_webhook_attempts (
    delivery_id  text COLLATE "C" NOT NULL,
    attempt      integer     NOT NULL,
    occurred_at  timestamptz NOT NULL,
    status_code  integer,
    error        text,
    PRIMARY KEY (delivery_id, attempt)
);
