DROP TABLE ecp_merchant_events;
