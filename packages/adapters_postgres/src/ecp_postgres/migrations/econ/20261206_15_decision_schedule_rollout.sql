-- depends: 20260830_14_decisions
-- A decision schedule may watch a rollout (ADR 0095): its comparisons are restricted to the
-- rollout's arms. A nullable column without a default or a constraint changes only the
-- catalogue; schedules made before it watch none.
ALTER TABLE ecp_decision_schedules ADD COLUMN rollout_id text;
