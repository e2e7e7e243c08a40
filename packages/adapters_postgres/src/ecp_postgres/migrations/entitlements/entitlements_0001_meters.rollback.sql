DROP TABLE ecp_meters;
