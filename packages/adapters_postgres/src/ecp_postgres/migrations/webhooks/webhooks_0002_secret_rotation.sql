-- depends: webhooks_0001_subscriptions_deliveries
-- Secret rotation (ADR 0054): after a rotation the previous secret signs beside the current one
-- until previous_secret_expires_at; then a sweep forgets it. At most two secrets
-- sign: a rotation during the overlap drops the oldest.
ALTER TABLE ecp_webhook_subscriptions
    ADD COLUMN previous_secret            text,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD CONSTRAINT ecp_webhook_subscriptions_previous_secret_expiry
        CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));

-- The sweep that forgets expired previous secrets reads only rotated subscriptions.
CREATE INDEX ecp_webhook_subscriptions_previous_secret_expiry
    ON ecp_webhook_subscriptions (previous_secret_expires_at)
    WHERE previous_secret_expires_at IS NOT NULL;
