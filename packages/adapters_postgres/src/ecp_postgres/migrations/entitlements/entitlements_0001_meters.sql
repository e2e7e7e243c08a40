-- depends: billing_0001_subscriptions
-- Meters of the hosted plans (spec "Limits"): units used per tenant, meter and billing period
-- (keyed by the period's start, so a new period starts at zero). A reservation locks its row
-- FOR UPDATE, so concurrent takers of the last unit serialize; usage never goes below zero.
CREATE TABLE ecp_meters (
    tenant_id     text        NOT NULL,
    meter         text        NOT NULL CHECK (
        meter IN ('ingested_events', 'decision_scans', 'hosted_backtests', 'provider_call_credits')
    ),
    period_start  timestamptz NOT NULL,
    used          bigint      NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (tenant_id, period_start, meter)
);
