DROP TABLE ecp_identity_bindings;
