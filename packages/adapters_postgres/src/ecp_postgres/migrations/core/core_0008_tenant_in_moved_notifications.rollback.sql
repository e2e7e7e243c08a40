CREATE OR REPLACE FUNCTION ecp_runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('PENDING', 'RUNNING') THEN
        PERFORM pg_notify('ecp_runs_runnable', '');
    ELSE
        PERFORM pg_notify('ecp_runs_moved', NEW.status || ' ' || NEW.run_id);
    END IF;
    RETURN NULL;
END
$$;
