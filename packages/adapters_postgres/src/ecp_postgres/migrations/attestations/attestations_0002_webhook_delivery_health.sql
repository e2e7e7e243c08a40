-- depends: attestations_0001_attestations
-- Audit delivery health (ADR 0042) counts a tenant's webhook outbox over a window in SQL:
-- deliveries enqueued since (created_at), attempts since (found through the deliveries updated
-- since: an attempt updates its delivery at the attempt's time), dead letters since (updated_at
-- of a dead delivery is when it died) and the pending queue now.
CREATE INDEX ecp_webhook_deliveries_by_tenant_created
    ON ecp_webhook_deliveries (tenant_id, created_at);
CREATE INDEX ecp_webhook_deliveries_by_tenant_updated
    ON ecp_webhook_deliveries (tenant_id, updated_at);
CREATE INDEX ecp_webhook_deliveries_pending_by_tenant
    ON ecp_webhook_deliveries (tenant_id)
    WHERE status = 'pending';
