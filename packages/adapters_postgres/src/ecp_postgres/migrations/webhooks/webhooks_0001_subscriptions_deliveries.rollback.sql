DROP TABLE ecp_webhook_attempts;
DROP TABLE ecp_webhook_deliveries;
DROP TABLE ecp_webhook_subscriptions;
