-- depends: audit_0003_deployment_order
-- The transparency log (ADR 0086): every audit record's digest becomes a leaf of its tenant's
-- Merkle log. An audit insert queues its records as pending leaves in the same transaction (a
-- statement trigger, so a batched insert queues in one statement); the integrator moves them
-- into ecp_log_leaves in the order it sees them committed, stores the tree as C2SP tiles
-- (the newest version of each; a partial tile is a prefix of its later versions) and signs a
-- checkpoint into ecp_log_heads. Records that exist already are queued here, oldest first.

CREATE TABLE ecp_log_pending (
    seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      text NOT NULL,
    audit_id       text NOT NULL,
    record_digest  text NOT NULL
);
CREATE INDEX ecp_log_pending_by_tenant ON ecp_log_pending (tenant_id, seq);

CREATE TABLE ecp_log_leaves (
    tenant_id      text   NOT NULL,
    leaf_index     bigint NOT NULL CHECK (leaf_index >= 0),
    audit_id       text   NOT NULL,
    record_digest  text   NOT NULL,
    PRIMARY KEY (tenant_id, leaf_index),
    UNIQUE (tenant_id, audit_id)
);

CREATE TABLE ecp_log_tiles (
    tenant_id   text     NOT NULL,
    level       smallint NOT NULL CHECK (level BETWEEN 0 AND 63),
    tile_index  bigint   NOT NULL CHECK (tile_index >= 0),
    hashes      bytea    NOT NULL CHECK (length(hashes) BETWEEN 32 AND 8192 AND length(hashes) % 32 = 0),
    PRIMARY KEY (tenant_id, level, tile_index)
);

CREATE TABLE ecp_log_heads (
    tenant_id   text        NOT NULL,
    tree_size   bigint      NOT NULL CHECK (tree_size >= 0),
    root        bytea       NOT NULL CHECK (length(root) = 32),
    note        text        NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, tree_size)
);

CREATE FUNCTION ecp_log_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ecp_log_pending (tenant_id, audit_id, record_digest)
    SELECT tenant_id, audit_id, record_digest FROM added ORDER BY run_id, attempt;
    RETURN NULL;
END
$$;

CREATE TRIGGER ecp_log_queue AFTER INSERT ON ecp_audit_records
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION ecp_log_queue();

INSERT INTO ecp_log_pending (tenant_id, audit_id, record_digest)
SELECT tenant_id, audit_id, record_digest FROM ecp_audit_records
ORDER BY created_at, run_id, attempt;
