-- depends: core_0003_listing_order
-- Child runs (ADR 0046): each run keeps its ancestors (parent first, up to the root run) so a
-- legal hold on a parent covers its descendants in one lookup, and a run's children are listed
-- by parent in id order. Runs stored before keep an empty lineage (they have no parent).

ALTER TABLE ecp_runs ADD COLUMN ancestor_run_ids jsonb NOT NULL DEFAULT '[]'::jsonb;
CREATE INDEX ecp_runs_children ON ecp_runs (tenant_id, parent_run_id, run_id)
    WHERE parent_run_id IS NOT NULL;
