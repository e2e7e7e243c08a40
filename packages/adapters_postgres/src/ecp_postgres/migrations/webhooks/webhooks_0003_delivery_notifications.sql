-- depends: webhooks_0002_secret_rotation
-- Wake-ups by LISTEN/NOTIFY (ADR 0063): a pending delivery queued (an event, a replay, a test
-- event) notifies `ecp_webhooks_due` with an empty payload, which wakes the delivery sweep of every
-- listening server; identical notifications of one transaction are sent once. Retries are due
-- later and are found by the sweep's own interval. Like the runs' notifications (core_0005), none
-- from a session whose `ecp.notify` setting is 'off'.

CREATE FUNCTION ecp_webhook_deliveries_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ecp_webhooks_due', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER ecp_webhook_deliveries_notify_queued AFTER INSERT ON ecp_webhook_deliveries
    FOR EACH ROW
    WHEN (current_setting('ecp.notify', true) IS DISTINCT FROM 'off' AND NEW.status = 'pending')
    EXECUTE FUNCTION ecp_webhook_deliveries_notify();
