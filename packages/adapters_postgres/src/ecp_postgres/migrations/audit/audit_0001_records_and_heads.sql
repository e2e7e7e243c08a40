-- depends: core_0001_graphs_deployments_runs
-- Audit chains. Personal-data columns are `json`, not `jsonb`: the commitments cover their exact
-- values, and jsonb would rewrite numbers (1e300 becomes 300 digits, an integer when read back).

CREATE TABLE ecp_audit_records (
    audit_id                text        PRIMARY KEY,
    tenant_id               text        NOT NULL,
    run_id                  text        NOT NULL,
    deployment_ref          text        NOT NULL,
    graph_version_ref       text        NOT NULL,
    node_id                 text        NOT NULL,
    attempt                 integer     NOT NULL CHECK (attempt >= 1),
    status                  text        NOT NULL,
    created_at              timestamptz NOT NULL,
    digest_version          smallint    NOT NULL CHECK (digest_version IN (1, 2)),
    record_digest           text        NOT NULL,
    previous_record_digest  text,
    pii_commitments         jsonb,
    input_snapshot          json,
    output_snapshot         json,
    validation_results      json,
    execution_metadata      json,
    stdout                  text,
    stderr                  text,
    error                   json,
    tool_calls              json,
    memory_interactions     json,
    signature               text,
    signing_key_id          text,
    erased                  boolean     NOT NULL DEFAULT false,
    erased_at               timestamptz,
    erasure_reason          text,
    UNIQUE (run_id, attempt)
);

CREATE INDEX ecp_audit_by_run ON ecp_audit_records (tenant_id, run_id, attempt);
CREATE INDEX ecp_audit_by_deployment ON ecp_audit_records (tenant_id, deployment_ref, run_id, attempt);

CREATE TABLE ecp_audit_heads (
    run_id         text    PRIMARY KEY,
    attempt        integer NOT NULL,
    record_digest  text    NOT NULL
);
