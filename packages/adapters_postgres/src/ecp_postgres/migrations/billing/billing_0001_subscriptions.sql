-- depends: core_0001_graphs_deployments_runs
-- Hosted subscriptions: one per tenant, its plan, state and billing period (spec "Subscription
-- and account"). A local trial has no merchant ids; only signed merchant events change paid state.
CREATE TABLE ecp_subscriptions (
    tenant_id                 text PRIMARY KEY,
    plan                      text        NOT NULL CHECK (plan IN ('trial', 'solo', 'team', 'scale')),
    status                    text        NOT NULL
        CHECK (status IN ('trialing', 'active', 'past_due', 'paused', 'canceled')),
    period_start              timestamptz NOT NULL,
    period_end                timestamptz,
    merchant_subscription_id  text,
    merchant_customer_id      text,
    price_id                  text,
    last_event_id             text,
    last_event_at             timestamptz,
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL
);
