-- depends: core_0007_claim_function
-- The run-moved notification names the run's tenant (ADR 0071): "<STATUS> <run_id> <tenant_id>".
-- A server rings the long-polling task claims of that tenant only when a run starts to wait for a
-- task, instead of every claim of every tenant. The tenant comes last, so it may hold spaces; a
-- tenant id fits the payload's 8000 bytes, since the run's tenant index holds it. Only the
-- function changes: the triggers of core_0005 call it as before. Servers read both shapes
-- (ecp_postgres.notifications.moved); a server older than this migration takes "<run_id>
-- <tenant_id>" for the run id, so its Prefer: wait finds another process's runs by polling
-- until it is replaced.

CREATE OR REPLACE FUNCTION ecp_runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('PENDING', 'RUNNING') THEN
        PERFORM pg_notify('ecp_runs_runnable', '');
    ELSE
        PERFORM pg_notify('ecp_runs_moved', NEW.status || ' ' || NEW.run_id || ' ' || NEW.tenant_id);
    END IF;
    RETURN NULL;
END
$$;
