-- depends: core_0009_run_started_by
-- Pausing (ADR 0076). A run records who paused its dispatch (`paused_by`: the run itself, its
-- deployment, or both; JSON like the run's other lists), a deployment whether it is paused. Both
-- columns are added with a constant default, so no row is rewritten. The claim takes only runs
-- nobody paused, from a partial index of exactly those, so paused runs cost a claim nothing; a
-- deployment's pause reaches its live runs through their own index, which leads with the
-- deployment so that the claim's scans in tenant order never take it for theirs.

ALTER TABLE ecp_runs ADD COLUMN paused_by jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE ecp_deployments ADD COLUMN paused boolean NOT NULL DEFAULT false;

CREATE INDEX ecp_runs_dispatchable ON ecp_runs (tenant_id, run_id)
    WHERE status IN ('PENDING', 'RUNNING') AND paused_by = '[]'::jsonb;
CREATE INDEX ecp_runs_live_by_deployment ON ecp_runs (deployment_ref, tenant_id)
    WHERE status NOT IN ('COMPLETED', 'FAILED', 'TERMINATED_BY_POLICY', 'CANCELED');

CREATE OR REPLACE FUNCTION ecp_claim_runnable(claim_now timestamptz, budget integer)
RETURNS TABLE (run_id text, tenant_id text, dispatch_failures integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH RECURSIVE tenants AS (
        (SELECT tenant_id FROM ecp_runs WHERE status IN ('PENDING', 'RUNNING') AND paused_by = '[]'::jsonb
          ORDER BY tenant_id LIMIT 1)
        UNION ALL
        SELECT (SELECT r.tenant_id FROM ecp_runs r
                 WHERE r.status IN ('PENDING', 'RUNNING') AND r.paused_by = '[]'::jsonb
                   AND r.tenant_id > t.tenant_id
                 ORDER BY r.tenant_id LIMIT 1)
          FROM tenants t WHERE t.tenant_id IS NOT NULL
    ), active AS (
        SELECT tenant_id FROM tenants WHERE tenant_id IS NOT NULL
    ), candidates AS (
        SELECT c.run_id, c.rank, s.served
          FROM active t
         CROSS JOIN LATERAL (
            SELECT r.run_id, row_number() OVER (ORDER BY r.tenant_id, r.run_id) AS rank
              FROM ecp_runs r
             WHERE r.tenant_id = t.tenant_id AND r.status IN ('PENDING', 'RUNNING')
               AND r.paused_by = '[]'::jsonb
               AND (r.dispatch_not_before IS NULL OR claim_now IS NULL
                    OR r.dispatch_not_before <= claim_now)
             ORDER BY r.tenant_id, r.run_id
             LIMIT (SELECT ceil(budget::numeric / count(*))::integer FROM active)) c
         CROSS JOIN LATERAL (
            SELECT max(x.dispatch_claim) AS served FROM ecp_runs x
             WHERE x.tenant_id = t.tenant_id AND x.dispatch_claim IS NOT NULL) s
    )
    UPDATE ecp_runs SET dispatch_claim = nextval('ecp_run_dispatch_claims')
     WHERE run_id = (
        SELECT r.run_id FROM candidates c JOIN ecp_runs r ON r.run_id = c.run_id
         WHERE r.status IN ('PENDING', 'RUNNING') AND r.paused_by = '[]'::jsonb
           AND (r.dispatch_not_before IS NULL OR claim_now IS NULL
                OR r.dispatch_not_before <= claim_now)
         ORDER BY c.rank, c.served NULLS FIRST, c.run_id
         LIMIT 1
           FOR UPDATE OF r SKIP LOCKED)
    RETURNING ecp_runs.run_id, ecp_runs.tenant_id, ecp_runs.dispatch_failures;
END
$$;
