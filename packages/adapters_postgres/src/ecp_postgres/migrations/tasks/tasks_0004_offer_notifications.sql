-- depends: tasks_0003_claim_by_age
-- A task that can be claimed now notifies `ecp_tasks_offered` with its tenant and topic, as the
-- JSON array ["<tenant_id>", "<topic>"] (either may hold spaces; both fit the payload's 8000
-- bytes). A server then wakes one long-polling claim of that tenant that takes the topic, instead
-- of every claim of the tenant (ADR 0071). It fires when a task is offered, and when one waits
-- again (a failed attempt retried at once, a lock that ran out); a task that waits for a later
-- retry (`not_before` ahead) is found by the claims' polling. `ecp.notify = off` turns it off,
-- as the run notifications of core_0005.

CREATE FUNCTION ecp_tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ecp_tasks_offered', json_build_array(NEW.tenant_id, NEW.topic)::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER ecp_tasks_notify_offered AFTER INSERT ON ecp_tasks
    FOR EACH ROW
    WHEN (current_setting('ecp.notify', true) IS DISTINCT FROM 'off'
          AND NEW.status = 'waiting'
          AND (NEW.not_before IS NULL OR NEW.not_before <= now()))
    EXECUTE FUNCTION ecp_tasks_notify();

CREATE TRIGGER ecp_tasks_notify_waiting_again AFTER UPDATE OF status ON ecp_tasks
    FOR EACH ROW
    WHEN (current_setting('ecp.notify', true) IS DISTINCT FROM 'off'
          AND NEW.status = 'waiting' AND OLD.status IS DISTINCT FROM 'waiting'
          AND (NEW.not_before IS NULL OR NEW.not_before <= now()))
    EXECUTE FUNCTION ecp_tasks_notify();
