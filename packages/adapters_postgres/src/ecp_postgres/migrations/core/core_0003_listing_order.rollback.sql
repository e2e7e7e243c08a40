ALTER TABLE ecp_deployments ALTER COLUMN deployment_ref TYPE text COLLATE "default";
ALTER TABLE ecp_graph_versions ALTER COLUMN graph_id TYPE text COLLATE "default";
