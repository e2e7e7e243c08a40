-- depends: backtests_0001_backtests
-- Server-signed attestations (spec "Attestation resources"; ADR 0041). First write wins per
-- (tenant, correlation): a correlation's attestations are numbered by generation, and a new one
-- is inserted with the next generation only once the previous one expired; racing submissions
-- meet on the primary key (INSERT ... ON CONFLICT DO NOTHING), so exactly one of them is stored.
-- Expired attestations stay as history.
CREATE TABLE ecp_attestations (
    tenant_id              text        NOT NULL,
    correlation_id         text COLLATE "C" NOT NULL,
    generation             integer     NOT NULL CHECK (generation >= 0),
    deployment_ref         text        NOT NULL,
    graph_version          text        NOT NULL,
    adapter_version        text        NOT NULL,
    inventory_fingerprint  text        NOT NULL,
    claimed_level          text        NOT NULL,
    issued_at              timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL CHECK (expires_at > issued_at),
    digest                 text        NOT NULL,
    signature              text,
    signing_key_id         text,
    CHECK ((signature IS NULL) = (signing_key_id IS NULL)),
    PRIMARY KEY (tenant_id, correlation_id, generation)
);
CREATE INDEX ecp_attestations_by_deployment
    ON ecp_attestations (tenant_id, deployment_ref, issued_at DESC, correlation_id DESC);
