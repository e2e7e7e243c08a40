-- depends: core_0003_listing_order
-- Graph templates (ADR 0045): immutable versions numbered per (tenant, name). The primary key
-- and the digest key make two concurrent creates of one name never share a version number nor
-- store the same content twice (the loser retries and finds the winner). Names compare by code
-- point (ecp_core.pages), so the primary key orders and bounds GET /v1/templates.
CREATE TABLE ecp_templates (
    tenant_id    text                NOT NULL,
    name         text COLLATE "C"    NOT NULL,
    version      integer             NOT NULL CHECK (version >= 1),
    digest       text                NOT NULL,
    description  text,
    parameters   jsonb               NOT NULL,
    graph        jsonb               NOT NULL,
    created_at   timestamptz         NOT NULL,
    PRIMARY KEY (tenant_id, name, version),
    UNIQUE (tenant_id, name, digest)
);
