DROP TABLE ecp_attestations;
