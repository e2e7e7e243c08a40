-- depends: core_0004_child_runs
-- Wake-ups by LISTEN/NOTIFY (ADR 0063). A run that becomes runnable (inserted pending, or back to
-- running from a wait) notifies `ecp_runs_runnable` with an empty payload, so one transaction that
-- makes many runs runnable sends one notification; a run that starts to wait or ends notifies
-- `ecp_runs_moved` with "<STATUS> <run_id>". Emitted by triggers, not by the adapter, so the run
-- path sends no extra statement; pending -> running (a dispatch claim) notifies nothing.
-- NOTIFY serialises the commits of notifying transactions (bench/wakeups.py measures the cost). A
-- session whose `ecp.notify` setting is 'off' notifies nothing: `ALTER DATABASE ... SET
-- ecp.notify = off` (or per role, or in a connection's options) turns them off without a
-- statement per transaction; listeners then find the work by polling.

CREATE FUNCTION ecp_runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('PENDING', 'RUNNING') THEN
        PERFORM pg_notify('ecp_runs_runnable', '');
    ELSE
        PERFORM pg_notify('ecp_runs_moved', NEW.status || ' ' || NEW.run_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER ecp_runs_notify_inserted AFTER INSERT ON ecp_runs
    FOR EACH ROW
    WHEN (current_setting('ecp.notify', true) IS DISTINCT FROM 'off')
    EXECUTE FUNCTION ecp_runs_notify();

CREATE TRIGGER ecp_runs_notify_moved AFTER UPDATE OF status ON ecp_runs
    FOR EACH ROW
    WHEN (current_setting('ecp.notify', true) IS DISTINCT FROM 'off'
          AND OLD.status IS DISTINCT FROM NEW.status
          AND NOT (OLD.status IN ('PENDING', 'RUNNING') AND NEW.status IN ('PENDING', 'RUNNING')))
    EXECUTE FUNCTION ecp_runs_notify();
