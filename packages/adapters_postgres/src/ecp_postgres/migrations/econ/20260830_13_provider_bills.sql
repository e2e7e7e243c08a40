-- depends: 20260830_12_evidence
-- Provider bills: one immutable statement per (tenant, provider, statement_id) with its digest,
-- and its buckets. Rolling this revision back drops only these two tables (and the index that
-- finds a provider's charges); evidence, outcomes and outcome definitions stay.

CREATE TABLE provider_bills (
    tenant_id         text COLLATE "C" NOT NULL,
    provider          text COLLATE "C" NOT NULL,
    statement_id      text COLLATE "C" NOT NULL,
    period_start      timestamptz NOT NULL,
    period_end        timestamptz NOT NULL,
    currency          text        NOT NULL CHECK (currency = 'USD'),
    billed_total_usd  numeric     NOT NULL CHECK (billed_total_usd > 0),
    source_kind       text        NOT NULL,
    digest            text        NOT NULL,
    imported_at       timestamptz NOT NULL,
    imported_by       text        NOT NULL,
    PRIMARY KEY (tenant_id, provider, statement_id)
);

CREATE TABLE provider_cost_buckets (
    tenant_id            text COLLATE "C" NOT NULL,
    provider             text COLLATE "C" NOT NULL,
    statement_id         text COLLATE "C" NOT NULL,
    bucket_id            text COLLATE "C" NOT NULL,
    period_start         timestamptz NOT NULL,
    period_end           timestamptz NOT NULL,
    amount_usd           numeric     NOT NULL CHECK (amount_usd > 0),
    model                text,
    provider_dimensions  jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, provider, statement_id, bucket_id),
    FOREIGN KEY (tenant_id, provider, statement_id)
        REFERENCES provider_bills (tenant_id, provider, statement_id) ON DELETE CASCADE
);

-- A provider's charges in a period (the report's evidence).
CREATE INDEX ecp_evidence_executions_provider
    ON ecp_evidence_executions (tenant_id, (metadata ->> 'provider'), occurred_at)
    WHERE cost_role = 'charge';
