DROP TABLE ecp_subscriptions;
