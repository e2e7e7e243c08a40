DROP INDEX ecp_webhook_subscriptions_previous_secret_expiry;
ALTER TABLE ecp_webhook_subscriptions
    DROP CONSTRAINT ecp_webhook_subscriptions_previous_secret_expiry,
    DROP COLUMN previous_secret_expires_at,
    DROP COLUMN previous_secret;
