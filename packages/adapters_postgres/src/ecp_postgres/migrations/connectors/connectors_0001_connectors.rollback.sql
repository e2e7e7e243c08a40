DROP TABLE ecp_connector_costs;
DROP TABLE ecp_connector_tests;
DROP TABLE ecp_connector_cost_scopes;
DROP TABLE ecp_connectors;
