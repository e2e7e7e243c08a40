-- depends: audit_0002_salts
-- A deployment's records page by run id in code-point order, then attempt (PostgresAudit
-- .for_deployment, ADR 0068). run_id here has the database's collation, so an index on it could
-- not answer `ORDER BY run_id COLLATE "C", attempt` nor bound the page's cursor: every page read
-- and sorted the whole deployment. The index keys run_id under "C" instead; the column keeps its
-- collation (the lookups by run, the chain reads and the joins compare under it), and
-- ecp_audit_by_run answers a run's records.

-- The new index is built before the old one is dropped: reads of the table go on during the
-- build (appends wait for it), and the drop's exclusive lock lasts only to the commit.

CREATE INDEX ecp_audit_by_deployment_in_order
    ON ecp_audit_records (tenant_id, deployment_ref, run_id COLLATE "C", attempt);
DROP INDEX ecp_audit_by_deployment;
ALTER INDEX ecp_audit_by_deployment_in_order RENAME TO ecp_audit_by_deployment;
