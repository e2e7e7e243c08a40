-- depends: billing_0001_subscriptions
-- Hosted identity: an identity provider's organization bound to one local tenant at its first
-- login, never changed (spec "Authentication" 5). The organization id owns the tenant; a tenant
-- is bound to one organization at most.
CREATE TABLE ecp_identity_bindings (
    provider         text        NOT NULL,
    organization_id  text        NOT NULL,
    tenant_id        text        NOT NULL UNIQUE,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (provider, organization_id)
);
