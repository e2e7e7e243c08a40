-- The claim as core_0011 wrote it, then the limits go.

DROP FUNCTION ecp_claim_runnable(timestamptz, integer);
CREATE FUNCTION ecp_claim_runnable(claim_now timestamptz, budget integer)
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
            SELECT r.run_id, row_number() OVER (ORDER BY r.tenant_id, r.priority DESC, r.run_id) AS rank
              FROM ecp_runs r
             WHERE r.tenant_id = t.tenant_id AND r.status IN ('PENDING', 'RUNNING')
               AND r.paused_by = '[]'::jsonb
               AND (r.dispatch_not_before IS NULL OR claim_now IS NULL
                    OR r.dispatch_not_before <= claim_now)
             ORDER BY r.tenant_id, r.priority DESC, r.run_id
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

DROP FUNCTION ecp_admit_run(text, text);
DROP FUNCTION ecp_slot_free(text, text);
DROP INDEX ecp_deployments_limited;
DROP INDEX ecp_runs_holding_slots;
DROP TABLE ecp_tenant_limits;
ALTER TABLE ecp_deployments DROP COLUMN max_concurrent_runs;
ALTER TABLE ecp_runs DROP COLUMN holds_slot;
