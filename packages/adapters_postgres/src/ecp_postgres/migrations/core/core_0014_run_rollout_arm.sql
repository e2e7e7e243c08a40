-- depends: core_0013_concurrency_limits
-- The rollout and arm a run was assigned (ADR 0089). Nullable columns without a default or a
-- constraint: adding them changes only the catalogue (no row is rewritten or scanned, and the
-- ACCESS EXCLUSIVE lock is held for a moment). The model checks that an arm is not negative.
ALTER TABLE ecp_runs ADD COLUMN rollout_id text, ADD COLUMN arm integer;
