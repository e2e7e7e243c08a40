-- depends: entitlements_0001_meters
-- Bounded model backtests (spec "Backtest rules"; ADR 0038). The record holds numbers and
-- identifiers only (the JSON of ecp_core.backtests.model.Backtest); a request is known by its
-- keyed digest, unique per tenant. The sealed request lives in ecp_backtest_inputs only while
-- its backtest waits or runs. Workers claim with FOR UPDATE SKIP LOCKED: queued ones oldest
-- first, and running ones whose deadline passed long ago (their worker is gone).
CREATE TABLE ecp_backtests (
    backtest_id     text COLLATE "C" PRIMARY KEY,
    tenant_id       text        NOT NULL,
    request_digest  text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('queued', 'running', 'finished')),
    created_at      timestamptz NOT NULL,
    deadline_at     timestamptz,
    calls           integer     NOT NULL CHECK (calls >= 0),
    record          jsonb       NOT NULL,
    UNIQUE (tenant_id, request_digest)
);
CREATE INDEX ecp_backtests_by_tenant ON ecp_backtests (tenant_id, created_at DESC, backtest_id DESC);
CREATE INDEX ecp_backtests_waiting ON ecp_backtests (created_at, backtest_id) WHERE status <> 'finished';

CREATE TABLE ecp_backtest_inputs (
    backtest_id  text  PRIMARY KEY REFERENCES ecp_backtests (backtest_id) ON DELETE CASCADE,
    key_id       text  NOT NULL,
    sealed       bytea NOT NULL
);
