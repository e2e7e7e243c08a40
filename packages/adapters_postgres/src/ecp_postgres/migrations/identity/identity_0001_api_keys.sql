-- depends: core_0001_graphs_deployments_runs
-- Project API keys: the SHA-256 of each key, never the key. Authentication finds a key by its
-- hash (unique index); lists read a tenant's keys in creation order.

CREATE TABLE ecp_api_keys (
    key_id       text        PRIMARY KEY,
    tenant_id    text        NOT NULL,
    role         text        NOT NULL,
    fingerprint  text        NOT NULL,
    key_hash     text        NOT NULL,
    name         text        NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text        NOT NULL,
    revoked_at   timestamptz
);

CREATE UNIQUE INDEX ecp_api_keys_by_hash ON ecp_api_keys (key_hash);
CREATE INDEX ecp_api_keys_by_tenant ON ecp_api_keys (tenant_id, created_at, key_id);
