DROP TABLE ecp_runs;
DROP TABLE ecp_contracts;
DROP TABLE ecp_policies;
DROP TABLE ecp_deployments;
DROP TABLE ecp_graph_versions;
