-- depends: core_0001_graphs_deployments_runs audit_0001_records_and_heads
-- Retention: per-tenant policies (plus the system row 'default', seeded with keep-forever TTLs),
-- legal holds, the append-only retention audit log, and the indexes the TTL sweeps select by.
-- Ids that are sorted or paged on use the "C" collation, so ordering is by code point on any
-- server, exactly like the in-memory adapter.

CREATE TABLE ecp_retention_policies (
    tenant_id          text COLLATE "C" PRIMARY KEY,
    audit_ttl_seconds  integer     CHECK (audit_ttl_seconds BETWEEN 1 AND 2147483647),
    run_ttl_seconds    integer     CHECK (run_ttl_seconds BETWEEN 1 AND 2147483647),
    enabled            boolean     NOT NULL,
    updated_at         timestamptz NOT NULL
);

INSERT INTO ecp_retention_policies (tenant_id, audit_ttl_seconds, run_ttl_seconds, enabled, updated_at)
VALUES ('default', NULL, NULL, true, '1970-01-01T00:00:00Z');

CREATE TABLE ecp_legal_holds (
    hold_id      text COLLATE "C" PRIMARY KEY,
    tenant_id    text        NOT NULL,
    run_id       text,
    reason       text        NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text        NOT NULL,
    released_at  timestamptz,
    released_by  text
);

CREATE INDEX ecp_legal_holds_by_tenant ON ecp_legal_holds (tenant_id, created_at, hold_id);
CREATE INDEX ecp_legal_holds_active ON ecp_legal_holds (tenant_id, created_at, hold_id)
    WHERE released_at IS NULL;

CREATE TABLE ecp_retention_audit_log (
    entry_id      text COLLATE "C" PRIMARY KEY,
    tenant_id     text        NOT NULL,
    run_id        text,
    step          text        NOT NULL,
    status        text        NOT NULL,
    newly_erased  integer     NOT NULL CHECK (newly_erased >= 0),
    reason        text        NOT NULL,
    trigger       text        NOT NULL,
    occurred_at   timestamptz NOT NULL,
    detail        jsonb       NOT NULL
);

CREATE INDEX ecp_retention_audit_log_by_tenant ON ecp_retention_audit_log (tenant_id, entry_id DESC);

-- Erasure redacts a run row in place and notes when.
ALTER TABLE ecp_runs ADD COLUMN erased_at timestamptz;

-- Run TTL sweep: a tenant's terminal, not yet erased runs by last update.
CREATE INDEX ecp_runs_expired ON ecp_runs (tenant_id, updated_at)
    WHERE status IN ('COMPLETED', 'FAILED') AND erased_at IS NULL;

-- Audit TTL sweep: a tenant's erasable (version 2, not yet erased) records by creation.
CREATE INDEX ecp_audit_aged ON ecp_audit_records (tenant_id, created_at)
    WHERE digest_version = 2 AND NOT erased;
