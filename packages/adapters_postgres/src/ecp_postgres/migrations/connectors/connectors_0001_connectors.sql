-- depends: backtests_0001_backtests
-- Connectors and their cost-capped tests (spec "Connector and experiment resources"; ADR 0044).
-- ecp_connectors holds the ones tenants store through the API (settings-defined connectors
-- live in the settings only); params hold non-secret values and secret names, never a secret.
-- A test reserves against its scope row in ecp_connector_cost_scopes, locked FOR UPDATE, so
-- concurrent tests of one (tenant, campaign, run) decide their reservations one after the
-- other and committed + reserved never passes a cap. run_key is the run id, or '' for none
-- (a run id has at least one character). ecp_connector_tests is the idempotency record per
-- (tenant, campaign, operation); ecp_connector_costs the ledger of committed costs.
CREATE TABLE ecp_connectors (
    tenant_id     text        NOT NULL,
    ref           text        COLLATE "C" NOT NULL,
    backend_type  text        NOT NULL CHECK (backend_type IN ('model', 'http')),
    params        jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, ref)
);

CREATE TABLE ecp_connector_cost_scopes (
    tenant_id      text    NOT NULL,
    campaign_id    text    NOT NULL,
    run_key        text    NOT NULL,
    committed_usd  numeric NOT NULL DEFAULT 0 CHECK (committed_usd >= 0),
    reserved_usd   numeric NOT NULL DEFAULT 0 CHECK (reserved_usd >= 0),
    PRIMARY KEY (tenant_id, campaign_id, run_key)
);

CREATE TABLE ecp_connector_tests (
    tenant_id     text        NOT NULL,
    campaign_id   text        NOT NULL,
    operation_id  text        NOT NULL,
    record        jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, campaign_id, operation_id)
);

CREATE TABLE ecp_connector_costs (
    tenant_id      text        NOT NULL,
    cost_event_id  text        COLLATE "C" NOT NULL,
    campaign_id    text        NOT NULL,
    run_key        text        NOT NULL,
    amount_usd     numeric     NOT NULL CHECK (amount_usd >= 0),
    record         jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, cost_event_id)
);
CREATE INDEX ecp_connector_costs_by_scope
    ON ecp_connector_costs (tenant_id, campaign_id, run_key, cost_event_id);
