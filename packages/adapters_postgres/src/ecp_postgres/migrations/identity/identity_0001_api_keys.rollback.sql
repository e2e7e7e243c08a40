DROP TABLE ecp_api_keys;
