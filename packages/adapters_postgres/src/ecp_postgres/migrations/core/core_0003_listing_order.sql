-- depends: core_0002_run_dispatch
-- Graph ids and deployment refs compare by code point (ecp_core.pages), as run and approval ids
-- do, so the primary keys order and bound the listings GET /v1/graphs, GET /v1/graphs/{id}/versions
-- and GET /v1/deployments (ADR 0029).

ALTER TABLE ecp_graph_versions ALTER COLUMN graph_id TYPE text COLLATE "C";
ALTER TABLE ecp_deployments ALTER COLUMN deployment_ref TYPE text COLLATE "C";
