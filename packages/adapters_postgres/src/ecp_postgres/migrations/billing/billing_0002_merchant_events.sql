-- depends: billing_0001_subscriptions
-- Accepted merchant events by id, with the digest of their content: an exact retry is found and
-- answered as a duplicate, a changed replay as a conflict (spec "Inbound events"). Applied and
-- retained (older or equal-time) events alike; rejected ones are never stored.
CREATE TABLE ecp_merchant_events (
    event_id                  text PRIMARY KEY,
    digest                    text        NOT NULL,
    tenant_id                 text        NOT NULL,
    event_type                text        NOT NULL,
    merchant_subscription_id  text        NOT NULL,
    occurred_at               timestamptz NOT NULL,
    applied                   boolean     NOT NULL,
    received_at               timestamptz NOT NULL
);
