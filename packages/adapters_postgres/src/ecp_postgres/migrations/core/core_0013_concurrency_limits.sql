-- depends: core_0012_run_timers
-- Concurrency limits (ADR 0079). A deployment and a tenant may cap how many of their runs hold a
-- slot at once (`max_concurrent_runs`, null: no cap). A run holds a slot (`holds_slot`) from the
-- claim that admits it until it waits, is paused or ends; every column comes with a constant
-- default, so no row is rewritten. A tenant's limits row also says that the tenant has limits
-- at all (its own or a deployment's): the claim looks further only for such tenants, and
-- admissions in a tenant take turns on that row. The slots held are counted from a partial index
-- of exactly the holders.

ALTER TABLE ecp_runs ADD COLUMN holds_slot boolean NOT NULL DEFAULT false;
ALTER TABLE ecp_deployments ADD COLUMN max_concurrent_runs integer
    CONSTRAINT ecp_deployments_max_concurrent_runs_positive CHECK (max_concurrent_runs >= 1);

CREATE TABLE ecp_tenant_limits (
    tenant_id text PRIMARY KEY,
    max_concurrent_runs integer
        CONSTRAINT ecp_tenant_limits_max_concurrent_runs_positive CHECK (max_concurrent_runs >= 1)
);

CREATE INDEX ecp_runs_holding_slots ON ecp_runs (tenant_id, deployment_ref) WHERE holds_slot;
CREATE INDEX ecp_deployments_limited ON ecp_deployments (tenant_id)
    WHERE max_concurrent_runs IS NOT NULL;

-- Whether one more run of the deployment may hold a slot: its tenant and the deployment are
-- both under their limits (a missing limit is no limit). Read by the admission below, under
-- the tenant's limits row.
CREATE FUNCTION ecp_slot_free(slot_tenant text, slot_deployment text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT l.max_concurrent_runs IS NULL
                            OR (SELECT count(*) FROM ecp_runs h
                                 WHERE h.tenant_id = slot_tenant AND h.holds_slot)
                               < l.max_concurrent_runs
                       FROM ecp_tenant_limits l WHERE l.tenant_id = slot_tenant), true)
       AND coalesce((SELECT d.max_concurrent_runs IS NULL
                            OR (SELECT count(*) FROM ecp_runs h
                                 WHERE h.tenant_id = slot_tenant
                                   AND h.deployment_ref = slot_deployment AND h.holds_slot)
                               < d.max_concurrent_runs
                       FROM ecp_deployments d
                      WHERE d.tenant_id = slot_tenant AND d.deployment_ref = slot_deployment), true)
$$;

-- The admission of a run the claim picked that holds no slot yet, in a tenant with limits. The
-- tenant's limits row is taken first (skipped when another admission holds it: the caller
-- commits and claims again), so no two admissions of a tenant count at once; the count is then
-- read by a statement that starts after the lock, and so sees every admission committed before.
-- The caller commits at once, so the row is held for a moment, never for a node attempt.
CREATE FUNCTION ecp_admit_run(admit_tenant text, admit_run text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM 1 FROM ecp_tenant_limits l WHERE l.tenant_id = admit_tenant
        FOR NO KEY UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE ecp_runs r SET holds_slot = true
     WHERE r.run_id = admit_run AND r.tenant_id = admit_tenant AND NOT r.holds_slot
       AND ecp_slot_free(r.tenant_id, r.deployment_ref);
    RETURN FOUND;
END
$$;

-- The claim (ADR 0019, 0076, 0077) with limits: in a tenant with limits, a run that holds no
-- slot is a candidate only while its tenant and its deployment are under their limits (as this
-- statement sees them), so the tenant's next eligible run, of another deployment, is offered
-- instead; a run that holds a slot always is. The claimed run holds a slot from now, unless it
-- is `admitting`: then the caller admits it (ecp_admit_run) and commits without an attempt.
-- The candidates come in claim order from one statement (the full deployments computed once);
-- each is then locked by its key, skipping locked ones, until one is taken. Joined in one
-- statement, a plan could scan the live runs and compute the candidates again for each.
DROP FUNCTION ecp_claim_runnable(timestamptz, integer);
CREATE FUNCTION ecp_claim_runnable(claim_now timestamptz, budget integer)
RETURNS TABLE (run_id text, tenant_id text, dispatch_failures integer, admitting boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    candidate record;
BEGIN
    FOR candidate IN
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
    ), limits AS (
        SELECT l.tenant_id,
               l.max_concurrent_runs IS NOT NULL
               AND (SELECT count(*) FROM ecp_runs h WHERE h.tenant_id = l.tenant_id AND h.holds_slot)
                   >= l.max_concurrent_runs AS at_limit
          FROM active a JOIN ecp_tenant_limits l ON l.tenant_id = a.tenant_id
    ), full_deployments AS MATERIALIZED (
        SELECT d.tenant_id, d.deployment_ref
          FROM limits m JOIN ecp_deployments d ON d.tenant_id = m.tenant_id
         WHERE d.max_concurrent_runs IS NOT NULL
           AND (SELECT count(*) FROM ecp_runs h
                 WHERE h.tenant_id = d.tenant_id AND h.deployment_ref = d.deployment_ref
                   AND h.holds_slot) >= d.max_concurrent_runs
    )
    SELECT c.run_id, m.tenant_id IS NOT NULL AS limited
      FROM active t
      LEFT JOIN limits m ON m.tenant_id = t.tenant_id
     CROSS JOIN LATERAL (
        SELECT r.run_id, row_number() OVER (ORDER BY r.tenant_id, r.priority DESC, r.run_id) AS rank
          FROM ecp_runs r
         WHERE r.tenant_id = t.tenant_id AND r.status IN ('PENDING', 'RUNNING')
           AND r.paused_by = '[]'::jsonb
           AND (r.dispatch_not_before IS NULL OR claim_now IS NULL
                OR r.dispatch_not_before <= claim_now)
           AND (m.tenant_id IS NULL OR r.holds_slot
                OR (NOT m.at_limit
                    AND NOT EXISTS (SELECT 1 FROM full_deployments f
                                     WHERE f.tenant_id = r.tenant_id
                                       AND f.deployment_ref = r.deployment_ref)))
         ORDER BY r.tenant_id, r.priority DESC, r.run_id
         LIMIT (SELECT ceil(budget::numeric / count(*))::integer FROM active)) c
     CROSS JOIN LATERAL (
        SELECT max(x.dispatch_claim) AS served FROM ecp_runs x
         WHERE x.tenant_id = t.tenant_id AND x.dispatch_claim IS NOT NULL) s
     ORDER BY c.rank, s.served NULLS FIRST, c.run_id
    LOOP
        RETURN QUERY
        WITH picked AS (
            SELECT r.run_id, candidate.limited AND NOT r.holds_slot AS admitting
              FROM ecp_runs r
             WHERE r.run_id = candidate.run_id
               AND r.status IN ('PENDING', 'RUNNING') AND r.paused_by = '[]'::jsonb
               AND (r.dispatch_not_before IS NULL OR claim_now IS NULL
                    OR r.dispatch_not_before <= claim_now)
               FOR UPDATE OF r SKIP LOCKED
        )
        UPDATE ecp_runs u SET dispatch_claim = nextval('ecp_run_dispatch_claims'),
                              holds_slot = u.holds_slot OR NOT p.admitting
          FROM picked p
         WHERE u.run_id = p.run_id
        RETURNING u.run_id, u.tenant_id, u.dispatch_failures, p.admitting;
        IF FOUND THEN
            RETURN;
        END IF;
    END LOOP;
END
$$;
