-- depends: core_0001_graphs_deployments_runs
-- Run dispatch bookkeeping (ADR 0019): failed dispatches in a row and the backoff they earned,
-- kept in the row so they survive a restart, and a claim stamp that makes claims visit tenants
-- in turn. Runnable runs are indexed by tenant (replacing the index by id alone, which the
-- planner preferred for the per-tenant scans of a claim although it reads far more rows).

ALTER TABLE ecp_runs
    ADD COLUMN dispatch_failures   integer     NOT NULL DEFAULT 0 CHECK (dispatch_failures >= 0),
    ADD COLUMN dispatch_not_before timestamptz,
    ADD COLUMN dispatch_claim      bigint;

CREATE SEQUENCE ecp_run_dispatch_claims;

DROP INDEX ecp_runs_runnable;
CREATE INDEX ecp_runs_runnable_by_tenant ON ecp_runs (tenant_id, run_id)
    WHERE status IN ('PENDING', 'RUNNING');
CREATE INDEX ecp_runs_dispatch_claims ON ecp_runs (tenant_id, dispatch_claim)
    WHERE dispatch_claim IS NOT NULL;
